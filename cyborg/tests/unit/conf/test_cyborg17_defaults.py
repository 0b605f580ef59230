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
"""Every default that differs from openstack-cyborg 17.0.0's is told.

The upgrade guide's table (``cyborg17-changed-defaults``) must name each
option both services have whose default differs, with the reason. The
defaults of 17.0.0 come from its installed package, in the virtualenv
``tools/setup-client-venvs.sh`` makes, and from the ones written here.
"""

import glob
import json
import os
import pathlib
import re
import subprocess

import testtools

from cyborg.conf import opts
from cyborg.tests import openstack_fixtures

GUIDE = (pathlib.Path(__file__).parents[4] / 'doc' / 'source' / 'admin' /
         'upgrades.rst')

#: 17.0.0's defaults of the options it shares with Cyborg that matter most
#: to a takeover (read from its cyborg/conf).
KNOWN = {
    'DEFAULT.bind_timeout': 60,
    'DEFAULT.thread_pool_size': 10,
    'DEFAULT.periodic_interval': 60,
    'DEFAULT.state_path': '$pybasedir',
    'api.host_ip': '127.0.0.1',
    'api.port': 6666,
    'api.enable_ssl_api': False,
}

_DUMP = """
import json
from cyborg.conf import opts
print(json.dumps({'%s.%s' % (getattr(g, 'name', g) or 'DEFAULT', o.dest):
                  o.default for g, group_opts in opts.list_opts()
                  for o in group_opts
                  if isinstance(o.default, (str, int, float, bool, list))}))
"""


def _installed_17_defaults():
    python = glob.glob(os.path.join(
        openstack_fixtures.VENVS, 'openstack-cyborg-17.0.0', 'bin', 'python'))
    if not python:
        return None
    # Isolated (-I): this checkout's cyborg must not be found first.
    return json.loads(subprocess.run(
        [python[0], '-I', '-c', _DUMP], capture_output=True, text=True,
        check=True, timeout=120, cwd='/').stdout)


def _ours():
    return {'%s.%s' % (getattr(group, 'name', group) or 'DEFAULT', opt.dest):
            opt for group, group_opts in opts.list_opts()
            for opt in group_opts}


def _listed():
    text = GUIDE.read_text()
    section = text.split('.. _cyborg17-changed-defaults:', 1)[1].split(
        '\n~~~', 1)[1].split('\n~~~', 1)[0]
    # The first cell of each row of the table.
    return {'%s.%s' % match for match in re.findall(
        r'^   \* - ``\[(\w+)\] (\w+)``', section, re.MULTILINE)}


class TestChangedDefaults(testtools.TestCase):

    def _check(self, theirs):
        ours = _ours()
        changed = {name for name, default in theirs.items()
                   if name in ours and not ours[name].deprecated_for_removal
                   and ours[name].default != default}
        self.assertEqual(set(), changed - _listed())

    def test_known_changes_are_listed(self):
        self.assertIn('DEFAULT.bind_timeout', _listed())
        self._check(KNOWN)

    def test_every_change_of_the_installed_17_is_listed(self):
        theirs = _installed_17_defaults()
        if theirs is None:
            self.skipTest('openstack-cyborg 17.0.0 is not installed')
        # Defaults computed on the host where they run.
        for name in ('DEFAULT.host', 'DEFAULT.pybasedir'):
            theirs.pop(name, None)
        self._check(theirs)
