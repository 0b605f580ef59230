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
"""Version numbers the code defines, for the docs: substitutions and a check.

The docs never type the current conductor or agent RPC API version, the
newest API microversion or the alembic head: they write
``|conductor_rpc_version|``, ``|agent_rpc_version|``, ``|max_microversion|``
and ``|alembic_head|``, which this extension defines from the code. History
may name any version ("from microversion 2.5", "version 1.1 of the
conductor RPC API added ..."); a sentence that says which version is the
current one may not. :func:`find_stale` finds those sentences: the Sphinx
build warns about them, and ``cyborg/tests/unit/test_docs.py`` runs it over
every page, the API reference and README.md.

The module imports no Sphinx, so that the unit test can load it.
"""

import re

#: Substitution name -> what it holds, for the warnings.
SUBSTITUTIONS = {
    'conductor_rpc_version': 'the conductor RPC API version',
    'agent_rpc_version': 'the agent RPC API version',
    'max_microversion': 'the newest API microversion',
    'alembic_head': 'the newest alembic revision',
}

# A claim that a version is the current one: one of these words (or a part
# of a hyphenated word, as in OpenStack-API-Maximum-Version), or a pair.
_MARKER_WORDS = frozenset((
    'current', 'currently', 'now', 'newest', 'latest', 'highest', 'maximum',
    'head'))
_MARKER_PAIRS = frozenset((('is', 'at'), ('are', 'at'), ('this', 'release')))
# Words that make the claim one about versions, near the marker.
_VERSION_WORDS = frozenset((
    'version', 'versions', 'microversion', 'microversions', 'rpc',
    'revision', 'alembic', 'schema', 'migration'))
_REVISION_WORDS = frozenset(('revision', 'alembic', 'schema', 'migration'))
# How many words after a marker a number may come, and how many words
# around it the version words are looked for.
_AFTER = 6
_AROUND = 8

# Words (dotted and hyphenated ones whole), single punctuation marks, and
# paragraph breaks. Backquotes and asterisks of inline markup are skipped.
_TOKEN = re.compile(r'\n[ \t]*\n|\w[\w.\-]*\w|\w|[^\s\w`*]')
# What ends a clause: a number after it belongs to another statement.
_STOP = frozenset('.;()!?[]{}')
_VERSION = re.compile(r'v?\d+\.\d+(?:\.\d+)?$')
_REVISION = re.compile(r'(?:\d{4}|[0-9a-f]{12})$')


def current():
    """Substitution name -> its value, read from the code."""
    # Imported here: a docs build imports the extension before it needs
    # the values, and the values need the whole package importable.
    from cyborg.agent import rpcapi as agent_rpcapi
    from cyborg.api import microversion
    from cyborg.conductor import rpcapi as conductor_rpcapi
    from cyborg.db import migration

    return {
        'conductor_rpc_version': conductor_rpcapi.ConductorAPI.RPC_API_VERSION,
        'agent_rpc_version': agent_rpcapi.AgentAPI.RPC_API_VERSION,
        'max_microversion': str(microversion.MAX_VERSION),
        'alembic_head': migration.head(),
    }


def _parts(word):
    return word.lower().split('-')


def _is_marker(tokens, i):
    """Whether tokens[i] starts a marker; returns its length in tokens."""
    if any(p in _MARKER_WORDS for p in _parts(tokens[i][0])):
        return 1
    if (i + 1 < len(tokens) and
            (tokens[i][0].lower(), tokens[i + 1][0].lower()) in
            _MARKER_PAIRS):
        return 2
    return 0


def _words(tokens):
    return {p for word, _ in tokens for p in _parts(word)}


def _suggestion(words):
    if words & _REVISION_WORDS:
        return 'alembic_head'
    if 'microversion' in words or 'microversions' in words or (
            'maximum' in words and 'api' in words):
        return 'max_microversion'
    if 'agent' in words and 'conductor' not in words:
        return 'agent_rpc_version'
    if 'rpc' in words or 'conductor' in words:
        return 'conductor_rpc_version'
    return None


def find_stale(text):
    """Current versions typed by hand in reStructuredText or Markdown.

    :returns: (line, number, message) for each number that a sentence
        claims to be the current version: within a few words after "is
        at", "are at", "this release", "now", "current", "newest",
        "latest", "highest", "maximum" or "head", in the same clause, with
        "version", "microversion", "RPC", "revision", "schema" or
        "alembic" nearby.
    """
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(text)]
    found = {}
    for i in range(len(tokens)):
        length = _is_marker(tokens, i)
        if not length:
            continue
        after = []
        for token in tokens[i + length:i + length + _AFTER + 1]:
            if token[0] in _STOP or not token[0].strip():
                break
            after.append(token)
        around = _words(tokens[max(0, i - _AROUND):i + length] + after)
        if not around & _VERSION_WORDS:
            continue
        for word, start in after:
            if not (_VERSION.match(word) or (
                    around & _REVISION_WORDS and _REVISION.match(word))):
                continue
            line = text.count('\n', 0, start) + 1
            name = _suggestion(around)
            if name:
                hint = 'write |%s| (%s) instead' % (name,
                                                    SUBSTITUTIONS[name])
            else:
                hint = ('write one of %s, or say where the code defines '
                        'it' % ', '.join('|%s|' % n for n in SUBSTITUTIONS))
            found[start] = (line, word, '%s is written as the current '
                            'version; %s' % (word, hint))
    return [found[start] for start in sorted(found)]


def _add_substitutions(app, config):
    lines = ['.. |%s| replace:: %s' % item for item in current().items()]
    config.rst_prolog = '\n'.join(
        [config.rst_prolog or ''] + lines) + '\n'


def _check(app, docname, source):
    from sphinx.util import logging

    log = logging.getLogger(__name__)
    for line, _number, message in find_stale(source[0]):
        log.warning(message, location=(docname, line))


def setup(app):
    app.connect('config-inited', _add_substitutions)
    app.connect('source-read', _check)
    return {'version': '1', 'parallel_read_safe': True,
            'parallel_write_safe': True}
