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
"""Gabbi fixtures: the API on a private database with a conductor.

Each YAML file gets a fresh database seeded with the hardware of two hosts
and a few accelerator requests; their identifiers are exported as
environment variables for ``$ENVIRON`` in the YAML. The rows differ in
every field a list filters or sorts on, so each filter keeps a strict
subset and each page boundary shows.
"""

import fixtures
from gabbi import fixture
from oslo_config import fixture as config_fixture
from oslo_utils import timeutils

import cyborg.conf
from cyborg import context
from cyborg.db import api as db_api
from cyborg.tests import base  # noqa: F401 (registers the objects)
from cyborg.tests import db_utils
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.api import test_openapi
from cyborg.tests import stand_ins

CONF = cyborg.conf.CONF

INSTANCE = '5d7a0b4d-5a5b-4bd8-9f6b-0f3c8e3c0c11'
PENDING_INSTANCE = '0f6e0c3e-4c3e-4a4b-8a62-2a2f33c0e8a1'
RP_UUID = '7c1f4c5e-6a0e-4f7e-9d0c-3d5a4f2b1e10'
FAILED_INSTANCE = '3c9d4e2a-7b1f-4d6e-8a5c-9e0f1b2c3d4e'
HOST2_RP_UUID = 'e2f0a9b8-4c6d-4e1f-9a3b-5c7d8e9f0a1b'
OTHER_PROJECT = 'other-project'
# After host1's Intel FPGA: (host, address, type, vendor, model, driver,
# rc, traits) of the other devices, in the order they are created.
OTHER_DEVICES = (
    ('host2', '0000:af:00.0', 'FPGA', '10ee', 'Alveo U250', 'xilinx_fpga',
     'FPGA', ['CUSTOM_FPGA_XILINX']),
    ('host2', '0000:3b:00.0', 'GPU', '10de', 'Tesla T4', 'nvidia_gpu',
     'PGPU', ['CUSTOM_GPU_NVIDIA']),
    ('host1', '0000:b1:00.0', 'QAT', '8086', 'C62x', 'intel_qat',
     'CUSTOM_QAT', []),
)

_APP = None


def setup_app():
    """gabbi's intercept: the application the running fixture built.

    gabbi asks for the application before the fixtures start, so this
    hands it a callable that finds the current one per request. Every
    answer to a call the OpenAPI document lists must be as it says.
    """
    return lambda environ, start_response: _APP(environ, start_response)


class _Environment(fixtures.Fixture):

    def _setUp(self):
        global _APP
        self.useFixture(config_fixture.Config(CONF))
        self.useFixture(cyborg_fixtures.Database())
        self.useFixture(cyborg_fixtures.RPC())
        self.useFixture(cyborg_fixtures.Conductor())
        self.useFixture(stand_ins.StandInAgent('host1'))
        _APP = test_openapi.checked(
            self.useFixture(cyborg_fixtures.API()).app)
        for name, value in self._seed().items():
            self.useFixture(fixtures.EnvironmentVariable(name, value))

    @staticmethod
    def _seed():
        ctx = context.get_admin_context()
        # Deployables named as our drivers name them; the API shows
        # <host>_<name>.
        device, deployable, _handles = db_utils.create_device_tree(
            ctx, hostname='host1', name='0000:5e:00.0')
        deployable = db_api.update(ctx, 'deployable', deployable.uuid,
                                   {'rp_uuid': RP_UUID})
        attribute = db_api.create(ctx, 'attribute', {
            'deployable_id': deployable.id, 'key': 'rc', 'value': 'FPGA'})
        trees = [db_utils.create_device_tree(
            ctx, hostname=host, pci_address=address, name=address,
            device_type=type_, vendor=vendor, model=model, driver_name=driver,
            resource_class=rc, traits=traits, handles=1)
            for host, address, type_, vendor, model, driver, rc, traits
            in OTHER_DEVICES]
        others = [deployable for _device, deployable, _handles in trees]
        # The Xilinx card: its host reported it unhealthy (2.9).
        now = timeutils.utcnow()
        quarantined = db_api.update(ctx, 'device', trees[0][0].uuid, {
            'health': 'unhealthy', 'health_changed_at': now,
            'health_reasons': ['0000:af:00.0: 1 new fatal AER error(s), '
                               '1 in all'],
            'quarantined_at': now})
        # Only what the seeded deployable offers, so binds succeed.
        profile = db_utils.create_profile(ctx, name='seeded-profile',
                                          groups=[{'resources:FPGA': '1'}])
        pending = db_utils.create_arqs(
            ctx, profile, count=1, project_id=CONF.api.
            noauth_default_project_id, state='BindStarted',
            hostname='host1', device_rp_uuid=RP_UUID,
            instance_uuid=PENDING_INSTANCE)[0]
        other = db_utils.create_arqs(ctx, profile, count=1,
                                     project_id=OTHER_PROJECT)[0]
        failed = db_utils.create_arqs(
            ctx, profile, count=1, project_id=CONF.api.
            noauth_default_project_id, state='BindFailed',
            hostname='host2', device_rp_uuid=HOST2_RP_UUID,
            instance_uuid=FAILED_INSTANCE)[0]
        return {
            'DEVICE_UUID': device.uuid,
            'DEPLOYABLE_UUID': deployable.uuid,
            'DEPLOYABLE_ID': str(deployable.id),
            'ATTRIBUTE_UUID': attribute.uuid,
            'XILINX_DEPLOYABLE_ID': str(others[0].id),
            'XILINX_DEPLOYABLE_UUID': others[0].uuid,
            'QUARANTINED_DEVICE_UUID': quarantined.uuid,
            'GPU_DEPLOYABLE_UUID': others[1].uuid,
            'RP_UUID': RP_UUID,
            'INSTANCE_UUID': INSTANCE,
            'PENDING_INSTANCE_UUID': PENDING_INSTANCE,
            'PENDING_ARQ_UUID': pending.uuid,
            'OTHER_PROJECT_ARQ_UUID': other.uuid,
            'FAILED_ARQ_UUID': failed.uuid,
            'FAILED_INSTANCE_UUID': FAILED_INSTANCE,
            'HOST2_RP_UUID': HOST2_RP_UUID,
            'SEEDED_PROFILE_UUID': profile.uuid,
            'PROJECT_ID': CONF.api.noauth_default_project_id,
        }


class APIFixture(fixture.GabbiFixture):
    """Runs one YAML file against a freshly seeded service."""

    def start_fixture(self):
        self._environment = _Environment()
        self._environment.setUp()

    def stop_fixture(self):
        self._environment.cleanUp()


class RequireServiceTokenOff(fixture.GabbiFixture):
    """``[api] require_service_token = False`` for one YAML file."""

    def start_fixture(self):
        CONF.set_override('require_service_token', False, group='api')

    def stop_fixture(self):
        CONF.clear_override('require_service_token', group='api')


class PublicEndpoint(fixture.GabbiFixture):
    """``[api] public_endpoint`` set for one YAML file."""

    def start_fixture(self):
        CONF.set_override('public_endpoint',
                          'https://cloud.example.com/accelerator',
                          group='api')

    def stop_fixture(self):
        CONF.clear_override('public_endpoint', group='api')
