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
"""What a plain ``pip install`` of Cyborg gives a production host."""

import ast
from importlib import metadata
import pathlib
import pkgutil
import re
import subprocess
import sys

from packaging import requirements
from packaging import version
import testtools

import cyborg

DIST = 'openstack-cyborg'
ROOT = pathlib.Path(cyborg.__file__).parent.parent

#: The demo's programs: ``python -m`` runs them, no console script does.
DEMO_PROGRAMS = {'cyborg-all-in-one', 'cyborg-nova-sim'}

#: What only the ``demo`` extra installs (openstack-placement).
DEMO_ONLY = ('placement',)


def _constraints():
    pins = {}
    for line in (ROOT / 'tools' / 'upper-constraints.txt').read_text(
            ).splitlines():
        if line and not line.startswith('#'):
            name, pin = line.split('===')
            pins[_canonical(name)] = version.Version(pin)
    return pins


def _canonical(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def _requirements(path):
    return [requirements.Requirement(line)
            for line in (ROOT / path).read_text().splitlines()
            if line.strip() and not line.startswith('#')]


class TestInstall(testtools.TestCase):

    def test_version_upgrades_openstack_cyborg_17(self):
        installed = version.Version(metadata.version(DIST))
        self.assertGreater(installed, version.Version('17.0.0'))

    def test_console_scripts_are_the_services(self):
        scripts = {ep.name for ep in metadata.distribution(DIST).entry_points
                   if ep.group == 'console_scripts'}
        self.assertEqual(set(), scripts & DEMO_PROGRAMS)
        self.assertLessEqual({'cyborg-api', 'cyborg-conductor',
                              'cyborg-agent', 'cyborg-dbsync'}, scripts)

    def test_service_modules_import_without_the_demo_extra(self):
        # None in sys.modules makes an import fail as if the package were
        # not installed. Alembic runs the migration scripts itself, and
        # cyborg.wsgi.api builds the application from the configuration
        # when a WSGI server imports it.
        modules = sorted(
            info.name for info in pkgutil.walk_packages(
                cyborg.__path__, 'cyborg.')
            if not info.name.startswith(('cyborg.demo', 'cyborg.tests',
                                         'cyborg.db.migrations.',
                                         'cyborg.wsgi.api')))
        self.assertIn('cyborg.cmd.api', modules)
        code = ('import importlib, sys\n'
                'for name in %r: sys.modules[name] = None\n'
                'for name in %r: importlib.import_module(name)\n' % (
                    DEMO_ONLY, modules))
        result = subprocess.run([sys.executable, '-c', code],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(0, result.returncode, result.stderr)


class TestRequirements(testtools.TestCase):

    def test_minimums_install_with_upper_constraints(self):
        # devstack, kolla and the distributions install with
        # openstack/requirements' pins: a minimum above one is refused.
        pins = _constraints()
        above = [str(req) for path in ('requirements.txt',
                                       'test-requirements.txt')
                 for req in _requirements(path)
                 if _canonical(req.name) in pins
                 and not req.specifier.contains(pins[_canonical(req.name)])]
        self.assertEqual([], above)

    def test_every_imported_library_is_a_requirement(self):
        listed = {_canonical(req.name)
                  for req in _requirements('requirements.txt')}
        # Import names of the runtime requirements whose distribution is
        # named otherwise.
        imported_as = {'oslo_%s' % name[len('oslo-'):]: name
                       for name in listed if name.startswith('oslo-')}
        imported_as.update({'glanceclient': 'python-glanceclient',
                            'os_resource_classes': 'os-resource-classes',
                            'os_traits': 'os-traits', 'yaml': 'pyyaml'})
        service = [path for path in (ROOT / 'cyborg').rglob('*.py')
                   if not {'tests', 'demo'} & set(path.parts)]
        imported = set()
        for path in service:
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    imported.update(alias.name.split('.')[0]
                                    for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    imported.add(node.module.split('.')[0])
        third_party = {name for name in imported
                       if name not in sys.stdlib_module_names
                       and name != 'cyborg'}
        missing = {name for name in third_party
                   if _canonical(imported_as.get(name, name)) not in listed}
        self.assertEqual(set(), missing)
