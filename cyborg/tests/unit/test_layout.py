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
"""The shape of the source tree: modules a newcomer can read."""

import pathlib
import subprocess

import testtools

#: The most lines a Python module of the repository may have, the
#: service's, its tests' and its tools' alike: past it, split the module
#: by noun or by step (the layer map, doc/source/contributor).
MAX_LINES = 500

#: The repository's root: this is cyborg/tests/unit/test_layout.py.
ROOT = pathlib.Path(__file__).resolve().parents[3]


def python_files():
    """The repository's Python files, as git sees them.

    The tracked ones and the new ones not ignored, so that a module is
    checked before it is added; virtualenvs, state and build directories
    are ignored. Paths deleted from the working tree are left out.
    """
    listed = subprocess.run(
        ['git', 'ls-files', '--cached', '--others', '--exclude-standard',
         '-z', '--', '*.py'], cwd=ROOT, check=True, capture_output=True,
        text=True).stdout
    return sorted(path for path in {ROOT / name for name in
                                    listed.split('\0') if name}
                  if path.is_file())


class TestLayout(testtools.TestCase):

    def test_every_python_file_is_checked(self):
        files = python_files()
        for path in ('cyborg/tests/unit/test_layout.py',
                     'tools/bench/compare.py',
                     'tools/quickstart/cyborg_quickstart/quickstart.py',
                     'doc/source/_exts/cyborg_layers.py'):
            self.assertIn(ROOT / path, files)

    def test_no_module_is_too_long(self):
        too_long = {
            str(path.relative_to(ROOT)): lines
            for path in python_files()
            for lines in [len(path.read_text().splitlines())]
            if lines > MAX_LINES}
        self.assertEqual({}, too_long)
