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
"""The services' side of the takeover rehearsal: 17.0.0's, then ours.

openstack-cyborg 17.0.0's services started on its configuration, then
the upgrade guide's steps (``doc/source/admin/upgrades.rst``): stop,
back the database up, ``cyborg-dbsync upgrade``, start ours on the same
configuration, audit; and the rollback's: restore the backup.

:class:`UpgradeSteps` is mixed into :class:`test_takeover.TestTakeover`,
a :class:`cyborg.tests.functional.services.ServicesTestCase` that sets
``api_port``, ``legacy_url``, ``glance_url``, ``nova_services`` (Nova's
services), ``trees`` ({host: its simulated sysfs tree}), ``bin_dir``
(17.0.0's tools), ``legacy_conf`` ({host or None: 17.0.0's sections},
from :meth:`UpgradeSteps._legacy_config`) and ``backup`` (where the
database is dumped).
"""

import os
import subprocess
import sys

import sqlalchemy as sa
import testtools

from cyborg.tests import functional
from cyborg.tests.functional.db import test_cyborg17
from cyborg.tests.functional import services
from cyborg.tests.functional.upgrade import cloud_view
from cyborg.tests.functional.upgrade import legacy_host
from cyborg.tests import openstack_fixtures
from cyborg.tests import privsep_helper
from cyborg_quickstart import nova

VENV = test_cyborg17.VENV
HOSTS = cloud_view.HOSTS
TIMEOUT = 180
#: Our drivers of the kinds of :data:`legacy_host.DESCRIPTION`.
OUR_DRIVERS = (
    'intel_fpga_driver', 'xilinx_fpga_driver', 'inspur_fpga_driver',
    'nvidia_gpu_driver', 'generic_pci_driver', 'intel_nic_driver',
    'intel_qat_driver', 'nvme_ssd_driver', 'fake_driver')
#: Who 17.0.0's API takes every request to be: its paste pipeline with
#: the stand-in for keystonemiddleware that Nova's API runs behind
#: (:func:`cyborg_quickstart.nova_venv.nova_runner.auth_filter_factory`).
_PASTE = '''[pipeline:main]
pipeline = request_id testauth api_v2

[app:api_v2]
paste.app_factory = cyborg.api.app:app_factory

[filter:testauth]
paste.filter_factory = nova_runner:auth_filter_factory

[filter:request_id]
paste.filter_factory = oslo_middleware:RequestId.factory
'''


def _token_auth(url):
    return {'auth_type': 'admin_token', 'endpoint': url,
            'token': nova.TOKEN, 'endpoint_override': url}


class UpgradeSteps:
    """Start, stop and upgrade the services as an operator does."""

    # --- 17.0.0 -----------------------------------------------------------

    def _legacy_config(self):
        """17.0.0's configuration: what ``/etc/cyborg/cyborg.conf`` holds.

        :returns: {host: its sections} for the agents, ``None`` for the
            API and conductor.
        """
        paste = os.path.join(self.tmp, 'api-paste.ini')
        with open(paste, 'w') as f:
            f.write(_PASTE)
        common = {
            'DEFAULT': {'transport_url': self.rabbit, 'debug': 'true',
                        'periodic_interval': 2},
            'database': {'connection': self.db_url},
            'placement': _token_auth(self.placement.url),
            'nova': _token_auth(self.nova_services.url),
            'glance': _token_auth(self.glance_url),
            'fpga': {'trusted_image_owners':
                     openstack_fixtures.Glance.TRUSTED_OWNER},
            'api': {'host_ip': '127.0.0.1', 'port': self.api_port,
                    'api_workers': 1, 'api_paste_config': paste},
        }
        confs = {None: common}
        for host, _node, rp_name in HOSTS:
            conf_path = os.path.join(self.tmp, 'legacy-%s.conf' % host)
            confs[host] = services.merged(services.merged(
                common, legacy_host.CONFIG), {
                'DEFAULT': {'host': host},
                'agent': {'resource_provider_name': rp_name},
                'cyborg_sys_admin': {'helper_command': '%s --config-file %s'
                                     % (VENV / 'bin' / 'privsep-helper',
                                        conf_path)}})
        return confs

    def _legacy_command(self, name):
        return [str(VENV / 'bin' / name)]

    def start_legacy(self):
        """17.0.0's API, conductor and an agent on each simulated host.

        Each agent starts once the one before has reported its host:
        17.0.0's conductor drops a device whose trait another report
        created a moment before (Placement answers 204, not 201), and
        its agents report again only a minute later.

        :returns: their processes.
        """
        processes = [
            self._start_legacy(legacy_host.api_command(
                VENV / 'bin' / 'python', self.api_port), 'legacy-api', None),
            self._start_legacy('cyborg-conductor', 'legacy-conductor',
                               None)]
        for count, (host, _node, _name) in enumerate(HOSTS, 1):
            processes.append(self._start_legacy(
                legacy_host.command(
                    self._legacy_command('cyborg-agent'),
                    self.trees[host].root, host, self.bin_dir),
                'legacy-%s' % host, host))
            functional.wait('17.0.0 reporting %s' % host,
                            lambda: self.reported(HOSTS[:count]), TIMEOUT)
        functional.wait('17.0.0 cyborg-api serving', lambda: self._get(
            self.legacy_url), TIMEOUT)
        return processes

    def _start_legacy(self, command, name, host):
        if isinstance(command, str):
            command = self._legacy_command(command)
        return self.start_service(command, name, self.legacy_conf[host])

    def dbsync_legacy(self):
        result = subprocess.run(
            self._legacy_command('cyborg-dbsync') + [
                '--config-file', self.write_conf('legacy-dbsync', {
                    'database': {'connection': self.db_url}}), 'upgrade'],
            capture_output=True, text=True)
        self.assertEqual(0, result.returncode, result.stderr)

    # --- the upgrade guide ------------------------------------------------

    def stop_all(self, processes):
        for process in processes:
            process.stop()

    def dump_database(self):
        url = sa.engine.make_url(self.db_url)
        with open(self.backup, 'w') as out:
            subprocess.run(
                ['mysqldump', '--single-transaction', '--routines', '-h',
                 url.host, '-u', url.username, url.database], stdout=out,
                check=True)

    def restore_database(self):
        url = sa.engine.make_url(self.db_url)
        with open(self.backup) as backup:
            subprocess.run(['mysql', '-h', url.host, '-u', url.username,
                            url.database], stdin=backup, check=True)

    def dbsync(self, conf_path):
        result = subprocess.run(
            [sys.executable, '-c', 'import sys; from cyborg.cmd import '
             'dbsync; sys.exit(dbsync.main())', '--config-file', conf_path,
             'upgrade'], capture_output=True, text=True)
        self.assertEqual(0, result.returncode, result.stderr)

    def start_controllers(self):
        """Our API and conductor with 17.0.0's configuration.

        And the one option an operator sets for the hours in which
        17.0.0's agents program FPGAs (see the upgrade guide).
        """
        common = services.merged(self.legacy_conf[None], {
            'conductor': {'cyborg17_agents_glance_token': 'true'}})
        processes = [self.start_service(
            'cyborg-conductor', 'conductor', services.merged(common, {
                'DEFAULT': {'host': 'conductor'},
                'conductor': {'workers': 1, 'reconcile_interval': 1},
                'nova': {'endpoint': self.nova_services.url}}))]
        processes.append(self.start_service(
            legacy_host.api_command(sys.executable, self.api_port), 'api',
            services.merged(common, {'api': {'auth_strategy': 'noauth'}})))
        functional.wait('our cyborg-api serving', lambda: self._get(
            self.legacy_url), TIMEOUT)
        return processes

    def start_our_agent(self, host):
        """Our agent on ``host``, with its 17.0.0 configuration."""
        return self.start_service(
            'cyborg-agent', host, services.merged(self.legacy_conf[host], {
                'DEFAULT': {'state_path': os.path.join(self.tmp, host)},
                'agent': {
                    'enabled_drivers': ','.join(OUR_DRIVERS),
                    'sysfs_root': self.trees[host].root,
                    'report_interval': 1,
                    'placement_wait_interval': 1,
                    'enable_hotplug_monitor': 'false'},
                'fpga': {'fpgaconf_path': os.path.join(self.bin_dir,
                                                       'fpgaconf')}}),
            privsep_helper.config_lines(
                os.path.join(self.tmp, host + '.conf')))

    def audit(self, *args):
        conf = self.write_conf('manage', services.merged(
            self.legacy_conf[None], {
                'nova': {'endpoint': self.nova_services.url}}))
        result = subprocess.run(
            [sys.executable, '-c', 'import sys; from cyborg.cmd import '
             'manage; sys.exit(manage.main())', '--config-file', conf,
             'audit', *args], capture_output=True, text=True)
        self.addDetail('audit', testtools.content.text_content(
            result.stdout + result.stderr))
        return result
