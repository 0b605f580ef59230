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

"""Tests that keep Cyborg's options registered, listed and documented."""

import importlib
import importlib.metadata
import json
import os
import pkgutil
import subprocess
import sys
import warnings

import fixtures
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_config import generator
import testtools

import cyborg
import cyborg.conf
from cyborg.conf import database
from cyborg.conf import default
from cyborg.conf import opts

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(
    cyborg.__file__)))
GENERATOR_CONF = os.path.join(REPO_ROOT, 'etc', 'cyborg',
                              'cyborg-config-generator.conf')

# Prints, as JSON, the options the global CONF holds right after ``import
# cyborg.conf`` in a fresh interpreter (so that options other tests register
# cannot blur it), and then the options that the library namespaces of the
# sample generator list.
_DUMP_CONF = """
import importlib.metadata
import json
import sys

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

import cyborg.conf

conf = cyborg.conf.CONF
registered = {'DEFAULT': []}
for name in conf:
    value = getattr(conf, name)
    if isinstance(value, cfg.ConfigOpts.GroupAttr):
        registered[name] = list(value)
    else:
        registered['DEFAULT'].append(name)

library = {}
namespaces = set(sys.argv[1:])
for entry_point in importlib.metadata.entry_points(group='oslo.config.opts'):
    if entry_point.name in namespaces:
        for group, opts in entry_point.load()():
            name = getattr(group, 'name', group) or 'DEFAULT'
            library.setdefault(name, []).extend(opt.dest for opt in opts)
print(json.dumps({'registered': registered, 'library': library}))
"""


def _name(group):
    return getattr(group, 'name', group) or 'DEFAULT'


def _listing_to_names(listing):
    """Map a list_opts() result to {group name: set of option names}."""
    if isinstance(listing, dict):
        listing = listing.items()
    names = {}
    for group, group_opts in listing:
        names.setdefault(_name(group), set()).update(
            opt.dest for opt in group_opts)
    return names


def _generator_namespaces():
    conf = cfg.ConfigOpts()
    generator.register_cli_opts(conf)
    conf(['--config-file', GENERATOR_CONF])
    return conf.namespace


def _run_python(test, code, *args):
    """Run code in a fresh interpreter, fail the test if it fails."""
    result = subprocess.run(
        [sys.executable, '-c', code] + list(args),
        capture_output=True, text=True, cwd=REPO_ROOT,
        env=dict(os.environ, PYTHONPATH=REPO_ROOT))
    test.assertEqual(0, result.returncode, result.stderr[-3000:])
    return result.stdout


def _group_modules():
    """Every module of cyborg.conf that defines an option group."""
    modules = []
    for info in pkgutil.iter_modules(cyborg.conf.__path__):
        module = importlib.import_module('cyborg.conf.' + info.name)
        if hasattr(module, 'register_opts'):
            modules.append(module)
    return modules


class TestListOpts(testtools.TestCase):

    def test_every_option_has_help(self):
        for group, group_opts in opts.list_opts():
            for opt in group_opts:
                self.assertTrue(
                    opt.help and opt.help.strip(),
                    '[%s] %s has no help text' % (_name(group), opt.dest))

    def test_one_entry_per_group_default_first(self):
        names = [_name(group) for group, _opts in opts.list_opts()]
        self.assertEqual(len(names), len(set(names)), names)
        self.assertEqual('DEFAULT', names[0])
        self.assertEqual(sorted(names[1:]), names[1:])

    def test_no_duplicate_options_in_a_group(self):
        for group, group_opts in opts.list_opts():
            dests = [opt.dest for opt in group_opts]
            self.assertEqual(len(dests), len(set(dests)),
                             'duplicates in [%s]' % _name(group))

    def test_every_group_module_is_listed(self):
        self.assertEqual(set(_group_modules()), set(opts.GROUP_MODULES))

    def test_module_registers_only_what_it_lists(self):
        # What a module registers must reach the sample: every option it
        # puts on a fresh ConfigOpts is in its own list_opts(). The options
        # of keystoneauth's auth plugins are left out: keystoneauth adds
        # those of the chosen ``auth_type`` when it loads one, and
        # oslo.config shares a group's options with every ConfigOpts that
        # registered the same group object, so earlier tests may show some.
        listed = _listing_to_names(opts.list_opts())
        plugin_opts = {opt.dest
                       for plugin in ks_loading.get_available_plugin_names()
                       for opt in ks_loading.get_auth_plugin_conf_options(
                           plugin)}
        for module in opts.GROUP_MODULES:
            conf = cfg.ConfigOpts()
            baseline = set(conf)
            module.register_opts(conf)
            module_listed = _listing_to_names(module.list_opts())
            for name in set(conf) - baseline:
                value = getattr(conf, name)
                if isinstance(value, cfg.ConfigOpts.GroupAttr):
                    names = set(value) - (plugin_opts - module_listed[name])
                    self.assertLessEqual(names, module_listed[name],
                                         module.__name__)
                    self.assertLessEqual(names, listed[name])
                else:
                    self.assertIn(name, module_listed['DEFAULT'],
                                  module.__name__)

    def test_registered_groups_are_listed(self):
        namespaces = set(_generator_namespaces()) - {'cyborg'}
        dump = json.loads(_run_python(self, _DUMP_CONF, *namespaces))
        registered = dump['registered']
        library = {group: set(names)
                   for group, names in dump['library'].items()}
        listed = _listing_to_names(opts.list_opts())
        baseline = set(cfg.ConfigOpts())

        # Groups that only libraries define are not ours to list.
        ours = {group for group, names in registered.items()
                if group == 'DEFAULT' or
                not (group.startswith('oslo_') or
                     set(names) <= library.get(group, set()))}
        self.assertEqual(set(listed), ours)

        for group in ours:
            documented = (listed.get(group, set()) |
                          library.get(group, set()) | baseline)
            undocumented = set(registered[group]) - documented
            self.assertEqual(set(), undocumented,
                             '[%s] options missing from the sample' % group)


class TestDefaults(testtools.TestCase):

    def _conf(self):
        conf = cfg.ConfigOpts()
        default.register_opts(conf)
        return conf

    def test_database_connection_under_state_path(self):
        conf = self._conf()
        database.register_opts(conf)
        conf([], default_config_files=[], default_config_dirs=[])
        self.assertEqual(
            'sqlite:///' + os.path.join(conf.state_path, 'cyborg.sqlite'),
            conf.database.connection)
        conf.set_override('state_path', '/srv/cyborg')
        self.assertEqual('sqlite:////srv/cyborg/cyborg.sqlite',
                         conf.database.connection)

    def test_set_defaults(self):
        conf = self._conf()
        opts.set_defaults(conf)
        conf([], default_config_files=[], default_config_dirs=[])
        self.assertEqual(database.DEFAULT_CONNECTION.replace(
            '$state_path', conf.state_path), conf.database.connection)

    def test_listed_database_default(self):
        listed = dict((_name(group), group_opts)
                      for group, group_opts in opts.list_opts())
        connection = [opt for opt in listed['database']
                      if opt.dest == 'connection']
        self.assertEqual([database.DEFAULT_CONNECTION],
                         [opt.default for opt in connection])


class TestSampleGenerator(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.assertIn(
            'cyborg',
            [ep.name for ep in importlib.metadata.entry_points(
                group='oslo.config.opts')],
            'the cyborg oslo.config.opts entry point is missing; install '
            'the project (pip install -e .)')
        tmp = self.useFixture(fixtures.TempDir()).path
        self.sample = os.path.join(tmp, 'cyborg.conf.sample')

    def _check_sample(self):
        with open(self.sample) as f:
            text = f.read()
        for group, _opts in opts.list_opts():
            self.assertIn('[%s]' % _name(group), text)
        self.assertIn('enabled_drivers', text)
        self.assertIn('#connection = sqlite:///$state_path/cyborg.sqlite',
                      text)
        self.assertEqual(1, text.count('\n#connection = '))
        self.assertIn('#control_exchange = cyborg', text)
        self.assertIn('[keystone_authtoken]', text)

    def test_generate_sample(self):
        conf = cfg.ConfigOpts()
        generator.register_cli_opts(conf)
        conf(['--config-file', GENERATOR_CONF, '--output-file', self.sample])
        with warnings.catch_warnings():
            # The generator imports every library namespace; deprecation
            # warnings from their imports (webob's use of cgi) are not ours.
            warnings.simplefilter('ignore', DeprecationWarning)
            generator.generate(conf)
        self._check_sample()

    def test_generator_command(self):
        # A fresh interpreter, as oslo-config-generator runs: the library
        # namespaces may be imported before cyborg is.
        _run_python(self,
                    'from oslo_config import generator; generator.main()',
                    '--config-file', GENERATOR_CONF,
                    '--output-file', self.sample)
        self._check_sample()
