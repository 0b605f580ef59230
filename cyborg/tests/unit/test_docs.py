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
"""The docs do not type by hand the versions the code defines.

The rule and the substitutions are in ``doc/source/_exts/cyborg_versions.py``
and explained in the documentation part of the contributor guide.
"""

import importlib.util
import pathlib
import re

from cyborg.agent import rpcapi as agent_rpcapi
from cyborg.api import microversion
from cyborg.conductor import rpcapi as conductor_rpcapi
from cyborg.db import migration
from cyborg.tests import base

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXTENSION = ROOT / 'doc' / 'source' / '_exts' / 'cyborg_versions.py'
#: Microversion history tables: ``* - 2.N`` in the first column.
HISTORY_TABLES = ('doc/source/api/concepts.rst', 'api-ref/source/index.rst')
_HISTORY_ROW = re.compile(r'^ {3}\* - (\d+\.\d+)\s*$', re.MULTILINE)


def _extension():
    spec = importlib.util.spec_from_file_location('cyborg_versions',
                                                  EXTENSION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def documents(root):
    """The pages the rule covers: guides, API reference, README."""
    return (sorted((root / 'doc' / 'source').rglob('*.rst')) +
            sorted((root / 'api-ref' / 'source').rglob('*.rst')) +
            sorted((root / 'api-ref' / 'source').rglob('*.inc')) +
            [root / 'README.md'])


def stale_versions(root=ROOT):
    """``path:line: message`` for each current version typed by hand."""
    find_stale = _extension().find_stale
    return ['%s:%d: %s' % (path.relative_to(root), line, message)
            for path in documents(root)
            for line, _number, message in find_stale(path.read_text())]


class TestVersionsInDocs(base.TestCase):

    def setUp(self):
        super().setUp()
        self.versions = _extension()

    def test_no_current_version_typed_by_hand(self):
        stale = stale_versions()
        self.assertEqual([], stale, '\n'.join(
            ['Current versions typed by hand (see the contributor guide, '
             '"Documentation"):'] + stale))

    def test_substitutions_follow_the_code(self):
        self.assertEqual(
            {'conductor_rpc_version':
                conductor_rpcapi.ConductorAPI.RPC_API_VERSION,
             'agent_rpc_version': agent_rpcapi.AgentAPI.RPC_API_VERSION,
             'max_microversion': microversion.VERSIONS[-1][0],
             'alembic_head': migration.head()},
            self.versions.current())
        self.assertEqual(set(self.versions.SUBSTITUTIONS),
                         set(self.versions.current()))

    def _numbers(self, text):
        return [number for _line, number, _message
                in self.versions.find_stale(text)]

    def test_current_claims_are_found(self):
        for text, number in (
                ('In this release both interfaces are at version ``1.0``, '
                 'the first.', '1.0'),
                ('The conductor RPC API is now version 1.1.', '1.1'),
                ('   Database is at revision 0001', '0001'),
                ('Its head revision is 2f1d0e3c4b5a.', '2f1d0e3c4b5a'),
                ('OpenStack-API-Maximum-Version: 2.5', '2.5'),
                ('The newest microversion, 2.5, adds PATCH.', '2.5'),
                ('Every object is at\nversion ``1.0``.', '1.0')):
            self.assertEqual([number], self._numbers(text), text)

    def test_history_and_other_numbers_pass(self):
        for text in (
                'From microversion 2.5 an administrator may change it.',
                'The calls go to a conductor through version 1.1 of its '
                'RPC API.',
                'A value is an RPC API version number, such as ``1.0``; '
                'the newest version is sent when it is unset.',
                'a bare ``2.N`` and ``latest`` work too) and gets 2.0',
                'The newest version the server supports. A request '
                'without the header is served as version 2.0.',
                'Cyborg needs Python 3.10 or newer.',
                'The current revision is |alembic_head|.',
                'OpenStack-API-Minimum-Version: 2.0',
                'The maximum is 1000 items a page.',
                'Now set version\n\n2.5'):
            self.assertEqual([], self._numbers(text), text)

    def test_line_numbers(self):
        found = self.versions.find_stale(
            'Title\n=====\n\nThe agents are\nat version 1.0.\n')
        self.assertEqual([(5, '1.0')], [f[:2] for f in found])

    def test_microversion_history_tables_are_complete(self):
        versions = [version for version, _note in microversion.VERSIONS]
        for table in HISTORY_TABLES:
            text = (ROOT / table).read_text()
            self.assertEqual(versions, _HISTORY_ROW.findall(text), table)


class TestLayerMap(base.TestCase):
    """The layer map names modules that exist, and every contract."""

    PAGE = ROOT / 'doc' / 'source' / 'contributor' / 'layers.rst'

    def test_named_modules_exist(self):
        text = self.PAGE.read_text()
        named = set(re.findall(r'``((?:[a-z_]+/)+[a-z_]+\.py)``', text))
        self.assertGreater(len(named), 20)
        missing = sorted(path for path in named
                         if not (ROOT / 'cyborg' / path).is_file())
        self.assertEqual([], missing)

    def test_every_contract_is_rendered(self):
        spec = importlib.util.spec_from_file_location(
            'cyborg_layers', ROOT / 'doc' / 'source' / '_exts' /
            'cyborg_layers.py')
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        contracts = module.contracts()
        self.assertEqual(
            len(re.findall(r'^\[importlinter:contract:', (
                ROOT / '.importlinter').read_text(), re.MULTILINE)),
            len(contracts))
        self.assertIn('cyborg.db', dict(
            (name, options) for name, _kind, options in contracts)[
            'The conductor writes through objects only and reaches '
            'hardware through agents']['forbidden_modules'])
