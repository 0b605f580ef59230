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
"""Fill a database of openstack-cyborg 17.0.0 through its own objects.

Not part of our code: ``test_cyborg17`` runs this file with the Python of
the virtualenv that holds openstack-cyborg 17.0.0, so every ``cyborg``
below is that package. Usage::

    python cyborg17_seed.py CONFIG_FILE [HOSTNAME [host|qat [NODE]]]

It creates two hosts' hardware (an FPGA whose deployable has a child, a
GPU being cleaned with a PCI and an MDEV handle), three device profiles
and ARQs in every state the service can reach (not UnbindFailed: its
MySQL schema cannot hold it, and its code fails before it would set it),
then prints, as JSON, every row as the service's own objects read it
back. Given a HOSTNAME (its ``[DEFAULT] host``), it creates instead what
17.0.0 reported for one simulated host (see ``_reported_host``), under
NODE, the name of the compute node provider its agent found in Placement
(HOSTNAME by default).
"""

import json
import sys
import uuid

from cyborg.common import constants
from cyborg.common import rpc
from cyborg.conf import CONF
from cyborg import context
from cyborg import objects

INSTANCES = ('11111111-1111-4111-8111-%012d' % i for i in range(100))


def _device(ctx, hostname, type_, vendor, model, address, state):
    device = objects.Device(
        context=ctx, type=type_, vendor=vendor, model=model,
        hostname=hostname, std_board_info=json.dumps({'product_id': '09c4'}),
        vendor_board_info='{"firmware": "1.2"}', status='enabled',
        device_state=state)
    device.create(ctx)
    domain, bus, rest = address.split(':')
    slot, function = rest.split('.')
    cpid = objects.ControlpathID(
        context=ctx, device_id=device.id, cpid_type='PCI',
        cpid_info=json.dumps({'domain': domain, 'bus': bus,
                              'device': slot, 'function': function}))
    cpid.create(ctx)
    return device, cpid


def _deployable(ctx, device, name, rp_uuid, driver, parent=None,
                accelerators=1, bitstream=None):
    deployable = objects.Deployable(
        context=ctx, name=name, num_accelerators=accelerators,
        device_id=device.id, rp_uuid=rp_uuid, driver_name=driver,
        bitstream_id=bitstream)
    if parent is not None:
        deployable.parent_id = parent.id
        deployable.root_id = parent.root_id or parent.id
    deployable.create(ctx)
    return deployable


def _attributes(ctx, deployable, pairs):
    for key, value in pairs:
        objects.Attribute(context=ctx, deployable_id=deployable.id,
                          key=key, value=value).create(ctx)


def _handles(ctx, deployable, cpid, attach_type, infos):
    for info in infos:
        objects.AttachHandle(
            context=ctx, deployable_id=deployable.id, cpid_id=cpid.id,
            attach_type=attach_type, attach_info=json.dumps(info),
            in_use=False).create(ctx)


def _hardware(ctx):
    fpga, fpga_cpid = _device(ctx, 'compute-1', 'FPGA', '8086',
                              'PAC Arria10', '0000:5e:00.0', 'allocated')
    region = _deployable(
        ctx, fpga, 'compute-1_0000:5e:00.0',
        'a1a1a1a1-0000-4000-8000-000000000001', 'intel_fpga',
        accelerators=2, bitstream='b17b17b1-0000-4000-8000-00000000000b')
    child = _deployable(ctx, fpga, 'compute-1_0000:5e:00.0_region1', None,
                        None, parent=region)
    _attributes(ctx, region, [('rc', 'FPGA'),
                              ('trait0', 'CUSTOM_FPGA_INTEL'),
                              ('trait1', 'CUSTOM_FPGA_REGION_1')])
    _attributes(ctx, child, [('rc', 'CUSTOM_REGION')])
    _handles(ctx, region, fpga_cpid, 'PCI', [
        {'domain': '0000', 'bus': '5e', 'device': '00', 'function': f}
        for f in ('1', '2', '3')])
    # Being cleaned: this release, which does not clean, disables it.
    gpu, gpu_cpid = _device(ctx, 'compute-2', 'GPU', '10de', 'Tesla T4',
                            '0000:3b:00.0', 'cleaning')
    gpu_dep = _deployable(ctx, gpu, 'compute-2_0000:3b:00.0',
                          'a1a1a1a1-0000-4000-8000-000000000002',
                          'nvidia_gpu_driver')
    _attributes(ctx, gpu_dep, [('rc', 'PGPU'),
                               ('trait0', 'CUSTOM_GPU_NVIDIA')])
    _handles(ctx, gpu_dep, gpu_cpid, 'PCI', [
        {'domain': '0000', 'bus': '3b', 'device': '00', 'function': '0'}])
    _handles(ctx, gpu_dep, gpu_cpid, 'MDEV', [
        {'domain': '0000', 'bus': '3b', 'device': '00', 'function': '0',
         'asked_type': 'nvidia-222'}])
    return region, gpu_dep


def _profiles(ctx):
    made = []
    for name, groups, description in (
            ('fpga-dp', [{'resources:FPGA': '1',
                          'trait:CUSTOM_FPGA_INTEL': 'required'}],
             'one Intel FPGA'),
            ('gpu-dp', [{'resources:PGPU': '1'},
                        {'resources:PGPU': '1',
                         'trait:CUSTOM_GPU_NVIDIA': 'required'}], None),
            ('unused-dp', [{'resources:CUSTOM_QAT': '2',
                            'accel:function_id': 'abc'}], 'never asked')):
        profile = objects.DeviceProfile(context=ctx, name=name,
                                        groups=groups)
        if description is not None:
            profile.description = description
        profile.create(ctx)
        made.append(profile)
    return made


def _arq(ctx, profile, group_id, project='project-a'):
    arq = objects.ARQ(context=ctx, device_profile_name=profile.name,
                      device_profile_group_id=group_id, project_id=project)
    return objects.ExtARQ(context=ctx, arq=arq).create(ctx, profile.id)


def _start_bind(ctx, extarq, hostname, deployable):
    extarq.arq.hostname = hostname
    extarq.arq.device_rp_uuid = deployable.rp_uuid
    extarq.arq.instance_uuid = next(INSTANCES)
    extarq.save(ctx)
    extarq.update_check_state(ctx, constants.ARQ_BIND_STARTED)


def _arqs(ctx, fpga_profile, gpu_profile, fpga, gpu):
    _arq(ctx, fpga_profile, 0)  # Initial
    _start_bind(ctx, _arq(ctx, fpga_profile, 0, 'project-b'), 'compute-1',
                fpga)  # BindStarted
    for profile, group_id, hostname, deployable in (
            (fpga_profile, 0, 'compute-1', fpga),
            (gpu_profile, 1, 'compute-2', gpu)):
        bound = _arq(ctx, profile, group_id)
        _start_bind(ctx, bound, hostname, deployable)
        bound.bind(ctx, deployable)  # Bound, with an attach handle
    failed = _arq(ctx, gpu_profile, 0)
    _start_bind(ctx, failed, 'compute-2', gpu)
    failed.update_check_state(ctx, constants.ARQ_BIND_FAILED)
    unbound = _arq(ctx, fpga_profile, 0)
    _start_bind(ctx, unbound, 'compute-1', fpga)
    unbound.bind(ctx, fpga)
    unbound.unbind(ctx)  # Unbound, its handle given back
    deleting = _arq(ctx, fpga_profile, 0, 'project-b')
    _start_bind(ctx, deleting, 'compute-1', fpga)
    deleting.bind(ctx, fpga)
    deleting.update_check_state(ctx, constants.ARQ_DELETING)


def _fields(obj, names):
    return {name: getattr(obj, name) for name in names}


def _dump(ctx):
    """Every row, as the service's objects show it."""
    arqs = []
    for extarq in objects.ExtARQ.list(ctx):
        row = _fields(extarq.arq, (
            'uuid', 'state', 'device_profile_name', 'device_profile_group_id',
            'hostname', 'device_rp_uuid', 'instance_uuid', 'project_id',
            'attach_handle_type', 'attach_handle_info'))
        row.update(_fields(extarq, ('attach_handle_id', 'deployable_id',
                                    'device_profile_group')))
        arqs.append(row)
    return {
        'device_profiles': [
            _fields(p, ('uuid', 'name', 'groups', 'description'))
            for p in objects.DeviceProfile.list(ctx)],
        'accelerator_requests': arqs,
        'devices': [
            _fields(d, ('id', 'uuid', 'type', 'vendor', 'model',
                        'std_board_info', 'vendor_board_info', 'hostname',
                        'status', 'device_state'))
            for d in objects.Device.list(ctx)],
        'deployables': [
            _fields(d, ('id', 'uuid', 'parent_id', 'root_id', 'name',
                        'num_accelerators', 'device_id', 'rp_uuid',
                        'driver_name', 'bitstream_id'))
            for d in objects.Deployable.list(ctx)],
        'attributes': [
            _fields(a, ('uuid', 'deployable_id', 'key', 'value'))
            for d in objects.Deployable.list(ctx)
            for a in objects.Attribute.get_by_deployable_id(ctx, d.id)],
        'attach_handles': [
            dict(_fields(h, ('id', 'uuid', 'deployable_id', 'cpid_id',
                             'attach_type', 'in_use')),
                 attach_info=json.loads(h.attach_info))
            for h in objects.AttachHandle.list(ctx)],
        'controlpath_ids': [
            dict(_fields(c, ('id', 'uuid', 'device_id', 'cpid_type')),
                 cpid_info=json.loads(c.cpid_info))
            for c in objects.ControlpathID.list(ctx)],
    }


def _reported_host(ctx, hostname, node):
    """What 17.0.0's agent and conductor write for a host's hardware.

    The rows are made by 17.0.0's own drivers' code from what their
    discovery reads of the simulated host that ``test_cyborg17_host``
    builds: an Intel PAC Arria 10 FPGA at 0000:5e:00.0 with two VFs (its
    port and AFU on the first), an NVIDIA T4 at 0000:3b:00.0 offered
    whole, and the fake driver's device. Each deployable gets the provider
    uuid that 17.0.0's conductor derives from its name; one ARQ is bound
    on each. The devices are recorded under ``node``, which Nova names in
    the binds too; the drivers name the deployables after ``hostname``.
    """
    from cyborg.accelerator.drivers import fake
    from cyborg.accelerator.drivers.fpga.intel import sysinfo as fpga
    from cyborg.accelerator.drivers.gpu.nvidia import sysinfo as gpu

    CONF.set_override('host', hostname)
    function = 'CUSTOM_FPGA_FUNCTION_ID_INTEL_' + '0' * 32

    def fpga_info(address, product, traits):
        # What fpga_tree() reads of a PF or VF, named after
        # socket.gethostname() (here CONF.host, as by default).
        info = {'type': 'FPGA', 'devices': address, 'stub': False,
                'name': hostname + '_' + address, 'vendor': '0x8086',
                'product_id': product, 'rc': 'FPGA'}
        if traits is not None:
            info['traits'] = traits
        return info

    card = fpga_info('0000:5e:00.0', '0x09c4', [
        'CUSTOM_FPGA_INTEL', 'CUSTOM_FPGA_INTEL_PAC_ARRIA10', function])
    card['regions'] = [fpga_info('0000:5e:00.1', '0x09c5', [function]),
                       fpga_info('0000:5e:00.2', '0x09c5', None)]
    devices = [
        fpga._generate_driver_device(card, True),
        gpu._generate_driver_device(dict(
            # What get_pci_devices() and lspci read.
            vendor_id='10de', device_id='1eb8', address='0000:3b:00.0',
            device_name='Tesla T4', class_name='3D controller',
            hostname=hostname, rc='PGPU',
            **gpu._get_traits('10de', '1eb8'))),
        *fake.FakeDriver().discover()]
    _report_and_bind(ctx, node, devices, [
        {'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required'},
        {'resources:PGPU': '1'},
        {'resources:FPGA': '1', 'trait:CUSTOM_FAKE_DEVICE': 'required'}])


def _reported_qat_host(ctx, hostname, node):
    """What 17.0.0 writes for a QAT C62x card with two VFs at 0000:3d:00.0.

    One deployable per VF, each named after the VF; an ARQ is bound on
    the first.
    """
    from cyborg.accelerator.drivers.qat.intel import sysinfo as qat

    def qat_gen(address, product):
        # What qat_gen() reads of a PF or VF.
        return {'name': hostname + '_' + address, 'device': address,
                'type': 'QAT', 'vendor': '0x8086', 'product_id': product,
                'rc': qat.RESOURCES['qat'], 'stub': False}

    card = qat_gen('0000:3d:00.0', '0x37c8')
    card['vfs'] = [qat_gen('0000:3d:00.%d' % n, '0x37c9') for n in (1, 2)]
    _report_and_bind(ctx, node, [qat._generate_driver_device(card)],
                     [{'resources:%s' % qat.RESOURCES['qat']: '1'}])


def _report_and_bind(ctx, hostname, devices, groups):
    """Write the driver devices; bind an ARQ on each's first deployable.

    Each deployable gets the provider uuid that 17.0.0's conductor
    derives from its name. The ARQ of device N asks for group N.
    """
    for device in devices:
        device.create(ctx, hostname)
        for dep in device.deployable_list:
            deployable = objects.Deployable.get_by_name(ctx, dep.name)
            deployable.rp_uuid = str(uuid.uuid3(uuid.NAMESPACE_DNS,
                                                deployable.name))
            deployable.save(ctx)
    profile = objects.DeviceProfile(context=ctx, name='host-dp',
                                    groups=groups)
    profile.create(ctx)
    for group_id, device in enumerate(devices):
        deployable = objects.Deployable.get_by_name(
            ctx, device.deployable_list[0].name)
        bound = _arq(ctx, profile, group_id)
        _start_bind(ctx, bound, hostname, deployable)
        bound.bind(ctx, deployable)


def main(config_file, hostname=None, kind='host', node=None):
    """Seed the two hosts, or what ``hostname`` reported, and dump.

    :param kind: ``host`` or ``qat``: see ``_reported_host`` and
        ``_reported_qat_host``.
    :param node: the name 17.0.0's agent found in Placement for the
        host's compute node (``hostname`` by default).
    """
    CONF(['--config-file', config_file], project='cyborg')
    rpc.init(CONF)
    objects.register_all()
    ctx = context.get_admin_context()
    if hostname:
        {'host': _reported_host, 'qat': _reported_qat_host}[kind](
            ctx, hostname, node or hostname)
    else:
        fpga, gpu = _hardware(ctx)
        fpga_profile, gpu_profile, _unused = _profiles(ctx)
        _arqs(ctx, fpga_profile, gpu_profile, fpga, gpu)
    json.dump(_dump(ctx), sys.stdout, default=str)


if __name__ == '__main__':
    main(*sys.argv[1:])
