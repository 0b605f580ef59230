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
"""With the default configuration every policy decision is 17.0.0's.

The persona matrix: each persona (the scopes of 17.0.0's own policy
tests) on a target of its own project and of another, for every rule
17.0.0 registers and every rule of ours. 17.0.0's decisions come from its
installed package, run with its own python (``cyborg17_policy_report``):
its rules in code, its enforcer defaults, no policy file. Ours come from
:func:`cyborg.policy.authorize` with the credentials the API's context
hook makes.
"""

import functools
import json
import pathlib
import subprocess

import fixtures as test_fixtures

from cyborg import context
from cyborg import exception
from cyborg.policies import accelerator_request as arq_rules
from cyborg.policies import attribute as attribute_rules
from cyborg.policies import deployable as deployable_rules
from cyborg.policies import device as device_rules
from cyborg.policies import device_profile as profile_rules
from cyborg import policy
from cyborg.tests import base
from cyborg.tests import fixtures
from cyborg.tests import openstack_fixtures

VENV = openstack_fixtures.VENVS / 'openstack-cyborg-17.0.0'
SCRIPT = pathlib.Path(__file__).with_name('cyborg17_policy_report.py')

PROJECT = 'project-a'
OTHER = 'project-b'
ALL = ['admin', 'manager', 'member', 'reader']

#: name -> (project, roles, system scope); implied roles included, as
#: Keystone puts them in a token.
PERSONAS = {
    'system_admin': (None, ALL, 'all'),
    'system_reader': (None, ['reader'], 'all'),
    'project_admin': (PROJECT, ALL, None),
    'project_manager': (PROJECT, ALL[1:], None),
    'project_member': (PROJECT, ALL[2:], None),
    'project_reader': (PROJECT, ['reader'], None),
    'other_project_member': (OTHER, ALL[2:], None),
    'legacy_member': (PROJECT, ['_member_'], None),
    'custom_role': (PROJECT, ['foo'], None),
    'service': ('service-project', ['service'], None),
    'no_roles': (PROJECT, [], None),
}


def _targets(name):
    """The caller's own project (and user), and someone else's."""
    project = PERSONAS[name][0]
    return {'own': {'project_id': project, 'user_id': name},
            'other': {'project_id': 'elsewhere', 'user_id': 'somebody'}}


@functools.lru_cache(maxsize=None)
def _cyborg17(enforce_new_defaults=None):
    """{rule: {persona: {target: allowed}}} of the installed 17.0.0."""
    request = {'enforce_new_defaults': enforce_new_defaults, 'personas': {
        name: {'user_id': name, 'project_id': project, 'roles': roles,
               'system_scope': scope, 'targets': _targets(name)}
        for name, (project, roles, scope) in PERSONAS.items()}}
    # Isolated (-I): this checkout's cyborg must not be found first.
    result = subprocess.run(
        [str(VENV / 'bin' / 'python'), '-I', str(SCRIPT)],
        input=json.dumps(request), capture_output=True, text=True,
        timeout=120, cwd='/')
    if result.returncode:
        raise AssertionError(result.stderr)
    return json.loads(result.stdout)


class TestCyborg17Decisions(base.TestCase):

    def setUp(self):
        super().setUp()
        self.policy = self.useFixture(fixtures.Policy())

    def _theirs(self, **kwargs):
        if not (VENV / 'bin' / 'python').exists():
            self.skipTest('%s is missing: run tools/setup-client-venvs.sh'
                          % VENV)
        return _cyborg17(**kwargs)

    def _ours(self, rules):
        decisions = {}
        for rule in rules:
            decisions[rule] = {}
            for name, (project, roles, scope) in PERSONAS.items():
                ctx = context.RequestContext(
                    user_id=name, project_id=project, roles=roles,
                    system_scope=scope)
                # As the API's context hook makes it.
                ctx.is_admin = policy.check_is_admin(ctx)
                decisions[rule][name] = {
                    target_name: self._allowed(ctx, rule, target)
                    for target_name, target in _targets(name).items()}
        return decisions

    @staticmethod
    def _allowed(ctx, rule, target):
        try:
            policy.authorize(ctx, rule, target)
        except exception.PolicyNotAuthorized:
            return False
        return True

    def _reload(self, enforce_new_defaults):
        self.policy.conf.set_override('enforce_new_defaults',
                                      enforce_new_defaults, 'oslo_policy')
        policy.reset()
        policy.init(self.policy.conf)

    def _registered(self):
        return set(policy.init().registered_rules)

    def test_default_is_17s_legacy_mode(self):
        self.assertFalse(self.policy.conf.oslo_policy.enforce_new_defaults)

    def test_the_legacy_mode_is_logged_once(self):
        # One warning at start, not oslo.policy's warning per rule (an
        # error under this suite's warning filter).
        log = self.useFixture(test_fixtures.FakeLogger(name='cyborg.policy'))
        self._reload(enforce_new_defaults=False)
        self._ours([device_rules.GET_ALL])
        self.assertEqual(1, log.output.count('enforce_new_defaults = True'))
        self._reload(enforce_new_defaults=True)
        self.assertEqual(1, log.output.count('enforce_new_defaults = True'))

    def test_every_rule_of_17_is_ours(self):
        self.assertEqual(set(), set(self._theirs()) - self._registered())

    def test_every_decision_is_17s(self):
        theirs = self._theirs()
        ours = self._ours(sorted(theirs))
        for rule in sorted(theirs):
            for persona in PERSONAS:
                self.assertEqual(theirs[rule][persona], ours[rule][persona],
                                 '%s for %s' % (rule, persona))

    def test_changed_rows_of_17(self):
        # The decisions a takeover would change without the fallbacks;
        # they hold without 17.0.0 installed too.
        ours = self._ours(self._registered())
        own = {rule: {p for p, targets in persona.items() if targets['own']}
               for rule, persona in ours.items()}
        projects = {p for p, (project, _r, _s) in PERSONAS.items()
                    if project == PROJECT}
        for rule in (device_rules.GET_ALL, deployable_rules.GET_ONE,
                     attribute_rules.GET_ALL, arq_rules.CREATE,
                     arq_rules.UPDATE, arq_rules.DELETE, arq_rules.GET_ONE,
                     profile_rules.GET_ALL):
            self.assertLessEqual(projects, own[rule], rule)
            self.assertFalse(ours[rule]['other_project_member']['other'])
        self.assertIn('service', own[profile_rules.GET_ONE])
        self.assertIn('service', own[arq_rules.GET_ALL])

    def test_rules_only_ours_are_for_administrators(self):
        theirs = self._theirs()
        only_ours = self._registered() - set(theirs)
        self.assertIn(device_rules.RELEASE, only_ours)
        for rule, personas in self._ours(sorted(only_ours)).items():
            allowed = {p for p, targets in personas.items()
                       if any(targets.values())}
            self.assertIn('project_admin', allowed, rule)
            self.assertEqual(set(), {p for p in allowed
                                     if 'admin' not in PERSONAS[p][1]}, rule)

    def test_new_defaults_are_one_switch_away(self):
        self._reload(enforce_new_defaults=True)
        ours = self._ours(self._registered())

        def allowed(rule, persona, target='own'):
            return ours[rule][persona][target]

        for rule in (device_rules.GET_ALL, deployable_rules.GET_ALL,
                     attribute_rules.GET_ONE):
            self.assertFalse(allowed(rule, 'project_member'), rule)
            self.assertTrue(allowed(rule, 'project_manager'), rule)
        for rule in (arq_rules.CREATE, arq_rules.UPDATE, arq_rules.DELETE):
            self.assertFalse(allowed(rule, 'project_reader'), rule)
            self.assertTrue(allowed(rule, 'project_member'), rule)
        for persona in ('legacy_member', 'custom_role', 'no_roles'):
            self.assertFalse(allowed(arq_rules.GET_ONE, persona))
            self.assertFalse(allowed(profile_rules.GET_ALL, persona))
        self.assertFalse(allowed(profile_rules.GET_ONE, 'service'))
        self.assertTrue(allowed(arq_rules.CREATE, 'service', 'other'))

    def test_new_defaults_never_allow_more_than_17s_legacy(self):
        # No decision of ours with the new defaults is one 17.0.0 refused
        # with its default configuration, but the admin's ARQ writes on
        # another project (17.0.0's is_admin fallback allowed them too).
        theirs = self._theirs()
        self._reload(enforce_new_defaults=True)
        ours = self._ours(sorted(theirs))
        wider = {(rule, persona, target)
                 for rule, personas in ours.items()
                 for persona, targets in personas.items()
                 for target, allowed in targets.items()
                 if allowed and not theirs[rule][persona][target]}
        self.assertEqual(set(), wider)
