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

import testtools

import cyborg

#: The most lines a module of the service may have: past it, split the
#: module by noun or by step (the layer map, doc/source/contributor).
MAX_LINES = 600


class TestLayout(testtools.TestCase):

    def test_no_module_is_too_long(self):
        root = pathlib.Path(cyborg.__file__).parent
        too_long = {
            str(path.relative_to(root)): lines
            for path in root.rglob('*.py') if 'tests' not in path.parts
            for lines in [len(path.read_text().splitlines())]
            if lines > MAX_LINES}
        self.assertEqual({}, too_long)
