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
"""What a plain ``pip install`` of Cyborg gives a production host.

The wheel holds the service. The quickstart, the Nova simulator and the
launchers of the other services are a tool of the repository
(``tools/quickstart``, the ``cyborg-quickstart`` distribution);
``tools/run-tests.sh`` also installs the wheel alone into a new virtualenv
and runs ``pip check`` there, which takes too long for a unit test.
"""

import ast
from importlib import metadata
import os
import pathlib
import pkgutil
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from packaging import requirements
from packaging import version
import testtools

import cyborg

DIST = 'openstack-cyborg'
ROOT = pathlib.Path(cyborg.__file__).parent.parent

#: Programs that are no console scripts of the service: the all-in-one
#: one-host mode (``python -m cyborg.cmd.all_in_one``) and the quickstart's
#: Nova simulator.
NOT_SCRIPTS = {'cyborg-all-in-one', 'cyborg-nova-sim'}

#: What the service never imports: the repository's quickstart and the
#: other OpenStack services it launches or simulates.
OTHER_SERVICES = ('cyborg_quickstart', 'glance', 'keystone', 'neutron',
                  'neutron_lib', 'nova', 'placement')

QUICKSTART = ROOT / 'tools' / 'quickstart' / 'cyborg_quickstart'
#: The quickstart's files that run in another service's virtualenv.
VENV_FILES = ('nova_venv', 'neutron_venv')


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
        self.assertEqual(set(), scripts & NOT_SCRIPTS)
        self.assertLessEqual({'cyborg-api', 'cyborg-conductor',
                              'cyborg-agent', 'cyborg-dbsync'}, scripts)

    def test_service_modules_import_without_other_services(self):
        # None in sys.modules makes an import fail as if the package were
        # not installed. Alembic runs the migration scripts itself, and
        # cyborg.wsgi.api builds the application from the configuration
        # when a WSGI server imports it.
        modules = sorted(
            info.name for info in pkgutil.walk_packages(
                cyborg.__path__, 'cyborg.')
            if not info.name.startswith(('cyborg.tests',
                                         'cyborg.db.migrations.',
                                         'cyborg.wsgi.api')))
        self.assertIn('cyborg.cmd.api', modules)
        code = ('import importlib, sys\n'
                'for name in %r: sys.modules[name] = None\n'
                'for name in %r: importlib.import_module(name)\n' % (
                    OTHER_SERVICES, modules))
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
                   if 'tests' not in path.parts]
        third_party = _third_party(
            path.read_text() for path in service) - {'cyborg'}
        missing = {name for name in third_party
                   if _canonical(imported_as.get(name, name)) not in listed}
        self.assertEqual(set(), missing)

    def test_quickstart_requires_what_it_imports(self):
        listed = {_canonical(requirements.Requirement(req).name)
                  for req in metadata.requires('cyborg-quickstart')}
        imported_as = {'cyborg': 'openstack-cyborg',
                       'glanceclient': 'python-glanceclient',
                       'oslo_config': 'oslo.config',
                       'oslo_utils': 'oslo.utils',
                       'placement': 'openstack-placement'}
        modules = [path for path in QUICKSTART.rglob('*.py')
                   if not set(VENV_FILES) & set(path.parts)]
        third_party = _third_party(
            path.read_text() for path in modules) - {'cyborg_quickstart'}
        missing = {name for name in third_party
                   if _canonical(imported_as.get(name, name)) not in listed}
        self.assertEqual(set(), missing)

    def test_files_run_in_other_virtualenvs_declare_their_requirements(self):
        # They run by path beside each other, with neither Cyborg nor the
        # quickstart installed: what they import is a requirement of that
        # virtualenv (tools/setup-client-venvs.sh installs it).
        for name in VENV_FILES:
            files = sorted((QUICKSTART / name).glob('*.py'))
            listed = {_canonical(req.name) for req in _requirements(
                QUICKSTART.relative_to(ROOT) / name / 'requirements.txt')}
            third_party = _third_party(
                path.read_text() for path in files) - {
                    path.stem for path in files}
            missing = {module for module in third_party
                       if _canonical(module) not in listed}
            self.assertEqual(set(), missing, name)


def _third_party(sources):
    """The top-level names of the libraries ``sources`` import."""
    imported = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split('.')[0]
                                for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                imported.add(node.module.split('.')[0])
    return {name for name in imported
            if name not in sys.stdlib_module_names}


class TestWheel(testtools.TestCase):
    """The built wheel: the service, its tests, nothing of the tools."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # A copy of the tree as git would commit it, built where the
        # build leaves nothing behind; pbr takes the version it is given
        # when it has no git history to read it from.
        tree = tempfile.mkdtemp(prefix='cyborg-wheel-')
        cls.addClassCleanup(shutil.rmtree, tree)
        files = subprocess.run(
            ['git', 'ls-files', '-z', '--cached', '--others',
             '--exclude-standard'], cwd=ROOT, capture_output=True,
            check=True, timeout=60).stdout.decode().split('\0')
        source = os.path.join(tree, 'source')
        for name in filter(None, files):
            if (ROOT / name).is_file():
                os.makedirs(os.path.dirname(os.path.join(source, name)),
                            exist_ok=True)
                shutil.copy2(ROOT / name, os.path.join(source, name))
        subprocess.run(
            [sys.executable, '-m', 'pip', 'wheel', '-q', '--no-deps',
             '-w', os.path.join(tree, 'dist'), source], check=True,
            capture_output=True, timeout=300,
            env=dict(os.environ, PBR_VERSION=metadata.version(DIST)))
        [wheel] = pathlib.Path(tree, 'dist').glob('*.whl')
        with zipfile.ZipFile(wheel) as archive:
            cls.files = {name: archive.read(name)
                         for name in archive.namelist()}

    def test_only_cyborg(self):
        top = {name.split('/')[0] for name in self.files
               if not name.split('/')[0].endswith(('.dist-info', '.data'))}
        self.assertEqual({'cyborg'}, top)
        self.assertIn('cyborg/cmd/api.py', self.files)
        self.assertIn('cyborg/tests/sysfs.py', self.files)

    def test_no_extras(self):
        [meta] = [content for name, content in self.files.items()
                  if name.endswith('.dist-info/METADATA')]
        self.assertNotIn(b'Provides-Extra', meta)

    def test_service_modules_launch_or_simulate_no_other_service(self):
        # The tests ship, as in every OpenStack project; they get the
        # launchers from the repository's quickstart, not from the wheel.
        service = [content.decode() for name, content in self.files.items()
                   if name.endswith('.py')
                   and not name.startswith('cyborg/tests/')]
        self.assertEqual(set(), _third_party(service) & set(OTHER_SERVICES))
