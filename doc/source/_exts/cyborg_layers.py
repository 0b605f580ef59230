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
"""The ``import-contracts`` directive: the import-linter contracts, as text.

The layer map (doc/source/contributor/layers.rst) shows who may import
whom by rendering ``.importlinter`` itself, so the page says what the
checks enforce and cannot drift from them. Sphinx is imported only by
:func:`setup`, so that a unit test can load :func:`contracts`.
"""

import configparser
import os

CONFIG = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                      '.importlinter')
_PREFIX = 'importlinter:contract:'


def _modules(text):
    return [line.strip() for line in (text or '').splitlines()
            if line.strip()]


def contracts(path=CONFIG):
    """[(name, type, {option: [modules]})] in the file's order."""
    parser = configparser.ConfigParser()
    parser.read(path)
    result = []
    for section in parser.sections():
        if not section.startswith(_PREFIX):
            continue
        options = parser[section]
        result.append((options['name'], options['type'], {
            key: _modules(options.get(key)) for key in (
                'layers', 'source_modules', 'forbidden_modules',
                'ignore_imports')}))
    return result


def _rst(items):
    lines = []
    for name, kind, options in items:
        lines += ['**%s**' % name, '']
        if kind == 'layers':
            lines.append('   Layers, each importing only those below it: '
                         + ' > '.join('``%s``' % m
                                      for m in options['layers']) + '.')
        else:
            lines.append('   ' + ', '.join('``%s``' % m for m in
                                           options['source_modules']) +
                         ' may not import ' +
                         ', '.join('``%s``' % m for m in
                                   options['forbidden_modules']) + '.')
        if options['ignore_imports']:
            lines.append('   Allowed exceptions: ' + ', '.join(
                '``%s``' % m for m in options['ignore_imports']) + '.')
        lines.append('')
    return lines


def setup(app):
    from docutils import nodes
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective

    class ImportContracts(SphinxDirective):

        def run(self):
            self.env.note_dependency(os.path.abspath(CONFIG))
            container = nodes.container()
            self.state.nested_parse(StringList(_rst(contracts())),
                                    self.content_offset, container)
            return container.children

    app.add_directive('import-contracts', ImportContracts)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
