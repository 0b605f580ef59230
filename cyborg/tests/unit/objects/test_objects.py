# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""Object fingerprints, RPC round trips and persistence through objects."""

from oslo_utils import uuidutils
from oslo_versionedobjects import fields as ovo_fields
from oslo_versionedobjects import fixture

from cyborg.common import rpc
from cyborg.db import api as db_api
from cyborg import exception
from cyborg.objects import accelerator_request
from cyborg.objects import base as objects_base
from cyborg.objects import deployable
from cyborg.objects import device
from cyborg.objects import device_profile
from cyborg.objects import driver_report
from cyborg.objects import host as host_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils

# A change to an object's fields changes its fingerprint: bump its VERSION,
# teach obj_make_compatible the old shape, then update the hash here.
EXPECTED_FINGERPRINTS = {
    'AcceleratorRequest': '1.0-bb930f006eb71d4a85006ad0f4364544',
    'AttachHandle': '1.0-0853907fc2b8bafe4de8a0b80849926d',
    'AttachHandleReport': '1.0-4bc8b8ca0bddd6a38648a064ffc7de8c',
    'Attribute': '1.0-3e042d6370779d8da3d32f99ac8f5951',
    'AttributeReport': '1.0-8b0258883e67fc59f2c5e5541bd52b43',
    'ControlpathID': '1.0-0766f87734cb50c3e6de0660a6ce12bf',
    'ControlpathReport': '1.0-86e69faaf3c616283bb628496708fec2',
    'Deployable': '1.0-d51f17df1436da69ad45176fb103f2c5',
    'DeployableReport': '1.0-b2a8d3b9d4485433ac19f3e6c614c69d',
    'Device': '1.2-8fdab8eda15a82f7b869101abe72ff35',
    'DeviceProfile': '1.0-75fbf9668281185c601ec1a250a60972',
    'DeviceReport': '1.1-0f70418f617dfefb6fcc2c8b9f69ead6',
    # openstack-cyborg 17.0.0's agent reports: its names and versions.
    'DriverAttachHandle': '1.0-901a3af18a826be07afeb34fa9a379cd',
    'DriverAttribute': '1.0-8b0258883e67fc59f2c5e5541bd52b43',
    'DriverControlPathID': '1.0-e14d12caa861fca270a0f0b29a60964e',
    'DriverDeployable': '1.0-01ab81db0554f31e7d36676e4dc6f54d',
    'DriverDevice': '1.4-819386bf318932d4fe7255618f852ac2',
    'Host': '1.2-d27a1539860bc022c5e4c2c8d48f65bc',
    'NovaEvent': '1.0-d71a1fe41825eedad49e8957684ffea9',
    'HostReport': '1.0-975b0685707446af08dc35ac6305ccba',
}


class TestObjectVersions(base.TestCase):

    def test_versions(self):
        checker = fixture.ObjectVersionChecker(
            objects_base.CyborgObjectRegistry.obj_classes())
        expected, actual = checker.test_hashes(EXPECTED_FINGERPRINTS)
        self.assertEqual(expected, actual,
                         'Object fields changed; see the note above '
                         'EXPECTED_FINGERPRINTS.')


class TestCompatibility(base.TestCase):

    def test_device_report_1_0_has_no_health(self):
        report = driver_report.DeviceReport(
            type='FPGA', vendor='8086', model='n3000',
            controlpath_id=driver_report.ControlpathReport(
                cpid_type='PCI', cpid_info={'bus': '5e'}),
            health='unhealthy', health_reasons=['link down'])
        manifest = {name: classes[0].VERSION for name, classes in
                    objects_base.CyborgObjectRegistry.obj_classes().items()}
        data = report.obj_to_primitive(
            target_version='1.0', version_manifest=manifest)[
                'cyborg_object.data']
        self.assertNotIn('health', data)
        self.assertNotIn('health_reasons', data)
        self.assertIn('health', report.obj_to_primitive()[
            'cyborg_object.data'])

    def test_device_1_1_has_no_health(self):
        dev = device.Device(uuid=uuidutils.generate_uuid(), type='FPGA',
                            vendor='8086', model='m', hostname='h',
                            health='healthy', health_reasons=[],
                            quarantined_at=None, vanished_at=None)
        data = dev.obj_to_primitive(target_version='1.1')[
            'cyborg_object.data']
        self.assertEqual({'uuid', 'type', 'vendor', 'model', 'hostname',
                          'vanished_at'}, set(data))


class TestSerializer(base.TestCase):

    def test_report_round_trip(self):
        report = driver_report.HostReport(hostname='host1', devices=[
            driver_report.DeviceReport(
                type='FPGA', vendor='8086', model='n3000',
                controlpath_id=driver_report.ControlpathReport(
                    cpid_type='PCI', cpid_info={'bus': '5e'}),
                deployables=[driver_report.DeployableReport(
                    name='host1_0000:5e:00.0', num_accelerators=1,
                    driver_name='intel_fpga',
                    attributes=[driver_report.AttributeReport(
                        key='rc', value='FPGA')],
                    attach_handles=[driver_report.AttachHandleReport(
                        attach_type='PCI', attach_info={'bus': '5e'})])])])
        serializer = rpc.RequestContextSerializer(
            objects_base.CyborgObjectSerializer())
        primitive = serializer.serialize_entity(self.context, report)
        back = serializer.deserialize_entity(self.context, primitive)
        self.assertEqual('host1', back.hostname)
        dep = back.devices[0].deployables[0]
        self.assertEqual('FPGA', dep.attributes[0].value)
        self.assertEqual({'bus': '5e'}, dep.attach_handles[0].attach_info)

    def test_context_round_trip(self):
        serializer = rpc.RequestContextSerializer(
            objects_base.CyborgObjectSerializer())
        back = serializer.deserialize_context(
            serializer.serialize_context(self.context))
        self.assertEqual(self.context.project_id, back.project_id)
        self.assertEqual(self.context.roles, back.roles)
        self.assertFalse(back.is_admin)


class TestPersistence(base.TestCase):
    USES_DB = True

    def test_device_profile_create_list_destroy(self):
        profile = device_profile.DeviceProfile(
            self.admin_context, name='dp', description=None,
            groups=[{'resources:FPGA': '1'}])
        profile.create(self.admin_context)
        self.assertTrue(uuidutils.is_uuid_like(profile.uuid))
        self.assertTrue(profile.enabled)
        got = device_profile.DeviceProfile.get_by_name(self.admin_context,
                                                       'dp')
        self.assertEqual(profile.uuid, got.uuid)
        self.assertEqual([{'resources:FPGA': '1'}], got.groups)
        got.description = 'changed'
        got.save(self.admin_context)
        self.assertEqual('changed', device_profile.DeviceProfile.get_by_uuid(
            self.admin_context, profile.uuid).description)
        got.destroy(self.admin_context)
        self.assertEqual([], device_profile.DeviceProfile.list(
            self.admin_context))

    def test_rows_load_as_coerced(self):
        """Objects read from rows hold what coercion would have given.

        A JSON value of strings is kept as read: the list or dict that
        coercion's ``CoercedList`` or ``CoercedDict`` derives from, with
        the same content.
        """
        profile = db_utils.create_profile(self.admin_context)
        _, dep, handles = db_utils.create_device_tree(self.admin_context)
        db_utils.create_arqs(self.admin_context, profile)
        classes = [(device_profile.DeviceProfile, 'device_profile'),
                   (deployable.Deployable, 'deployable'),
                   (device.Device, 'device'),
                   (accelerator_request.AcceleratorRequest,
                    'accelerator_request')]
        for cls, noun in classes:
            for row in db_api.get_all(self.admin_context, noun):
                loaded = cls._from_db_object(self.admin_context, row)
                coerced = cls(self.admin_context)
                for name in cls.fields:
                    if name not in cls._derived_fields:
                        setattr(coerced, name, getattr(row, name))
                coerced.obj_reset_changes()
                for name in cls.fields:
                    if not coerced.obj_attr_is_set(name):
                        continue
                    want, got = coerced[name], loaded[name]
                    if type(got) is not type(want):
                        self.assertIn(type(got), (list, dict), name)
                        self.assertIsInstance(want, type(got), name)
                    self.assertEqual(want, got, name)
                self.assertIsNotNone(loaded.created_at.tzinfo)

    def test_json_rows_not_of_strings_are_coerced(self):
        # A value written by something other than an object: a number.
        db_api.create(self.admin_context, 'device_profile', {
            'name': 'numbers', 'groups': [{'resources:FPGA': 1}]})
        [loaded] = device_profile.DeviceProfile.list(self.admin_context)
        self.assertEqual([{'resources:FPGA': '1'}], loaded.groups)
        self.assertIsInstance(loaded.groups, ovo_fields.CoercedList)

    def test_device_list_filters(self):
        db_utils.create_device_tree(self.admin_context, hostname='a')
        db_utils.create_device_tree(self.admin_context, hostname='b')
        devices = device.Device.list(self.admin_context,
                                     filters={'hostname': 'b'})
        self.assertEqual(['b'], [d.hostname for d in devices])
        self.assertEqual('enabled', devices[0].status)
        deps = deployable.Deployable.list(
            self.admin_context, filters={'device_id': devices[0].id})
        self.assertEqual(2, deps[0].num_accelerators)

    def test_arq_lifecycle_through_objects(self):
        profile = db_utils.create_profile(self.admin_context)
        _, dep, handles = db_utils.create_device_tree(self.admin_context)
        arq_cls = accelerator_request.AcceleratorRequest
        arq, = arq_cls.create_for_profile(self.admin_context, profile.name,
                                          'p1', limit=1)
        self.assertEqual('fpga-dp1', arq.device_profile_name)
        self.assertEqual('', arq.attach_handle_type)
        self.assertEqual({}, arq.attach_handle_info)
        self.assertIsNone(arq.attach_handle_uuid)
        arq.update_state(self.admin_context, states.BIND_STARTED,
                         values={'hostname': 'host1'})
        self.assertFalse(arq.claim_handle(self.admin_context, dep.id))
        arq.update_state(self.admin_context, states.BOUND)
        self.assertEqual(states.BOUND, arq.state)
        self.assertEqual('PCI', arq.attach_handle_type)
        self.assertEqual(handles[0].uuid, arq.attach_handle_uuid)
        self.assertEqual('1', arq.attach_handle_info['function'])
        arq.unbind(self.admin_context)
        self.assertEqual(states.UNBOUND, arq.state)
        self.assertEqual('', arq.attach_handle_type)
        arq.destroy(self.admin_context)
        self.assertRaises(exception.AcceleratorRequestNotFound,
                          arq_cls.get_by_uuid, self.admin_context, arq.uuid)


class TestHost(base.TestCase):
    USES_DB = True

    def test_placed_only_once_its_compute_node_is_known(self):
        ctx = self.admin_context
        self.assertIsNone(host_obj.Host.placed(ctx, 'host1'))
        # Its row, without a compute node provider.
        host_obj.Host.set_compute_rp(ctx, 'host1', None)
        self.assertIsNone(host_obj.Host.placed(ctx, 'host1'))
        rp_uuid = uuidutils.generate_uuid()
        host_obj.Host.set_compute_rp(ctx, 'host1', rp_uuid, 'node1')
        self.assertEqual(rp_uuid,
                         host_obj.Host.placed(ctx, 'host1').compute_rp_uuid)

    def test_reported_at_set_by_a_report_and_left_out_for_1_1(self):
        ctx = self.admin_context
        host_obj.Host.set_compute_rp(ctx, 'host1', None)
        self.assertIsNone(
            host_obj.Host.get_by_hostname(ctx, 'host1').reported_at)
        host_obj.Host.set_reported(ctx, 'host1')
        host = host_obj.Host.get_by_hostname(ctx, 'host1')
        self.assertIsNotNone(host.reported_at)
        self.assertIn('reported_at',
                      host.obj_to_primitive()['cyborg_object.data'])
        self.assertNotIn('reported_at', host.obj_to_primitive(
            target_version='1.1')['cyborg_object.data'])
