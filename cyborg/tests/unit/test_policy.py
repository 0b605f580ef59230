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
"""Persona tests of the policy rules, and their legacy fallbacks."""

import warnings

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

OWNER = 'owner-project'

# Roles as Keystone puts them in a token: implied roles included.
PERSONAS = {
    'admin': (OWNER, ['admin', 'manager', 'member', 'reader']),
    'manager': (OWNER, ['manager', 'member', 'reader']),
    'member': (OWNER, ['member', 'reader']),
    'reader': (OWNER, ['reader']),
    'other_member': ('other-project', ['member', 'reader']),
    'service': ('service-project', ['service']),
    'roleless': (OWNER, []),
}

EVERY_READER = {'admin', 'manager', 'member', 'reader', 'other_member'}
ADMIN = {'admin'}
MANAGERS = {'admin', 'manager'}
OWNER_READERS = {'admin', 'manager', 'member', 'reader'}
OWNER_WRITERS = {'admin', 'manager', 'member', 'service'}

#: rule -> personas it allows on an object owned by OWNER.
EXPECTED = {
    profile_rules.GET_ALL: EVERY_READER,
    profile_rules.GET_ONE: EVERY_READER,
    profile_rules.CREATE: ADMIN,
    profile_rules.DELETE: ADMIN,
    profile_rules.UPDATE: ADMIN,
    profile_rules.ENABLE: ADMIN,
    profile_rules.DISABLE: ADMIN,
    arq_rules.GET_ALL: OWNER_READERS,
    arq_rules.GET_ONE: OWNER_READERS,
    arq_rules.CREATE: OWNER_WRITERS,
    arq_rules.UPDATE: OWNER_WRITERS,
    arq_rules.DELETE: OWNER_WRITERS,
    device_rules.GET_ALL: MANAGERS,
    device_rules.GET_ONE: MANAGERS,
    device_rules.ENABLE: ADMIN,
    device_rules.DISABLE: ADMIN,
    deployable_rules.GET_ALL: MANAGERS,
    deployable_rules.GET_ONE: MANAGERS,
    deployable_rules.PROGRAM: ADMIN,
    attribute_rules.GET_ALL: MANAGERS,
    attribute_rules.GET_ONE: MANAGERS,
    attribute_rules.CREATE: ADMIN,
    attribute_rules.DELETE: ADMIN,
}


def _context(persona):
    project_id, roles = PERSONAS[persona]
    return context.RequestContext(user_id=persona, project_id=project_id,
                                  roles=roles)


class TestPolicy(base.TestCase):

    def setUp(self):
        super().setUp()
        self.policy = self.useFixture(fixtures.Policy())

    def _allowed(self, rule, persona):
        try:
            policy.authorize(_context(persona), rule,
                             {'project_id': OWNER})
        except exception.PolicyNotAuthorized:
            return False
        return True

    def test_every_rule_is_tested(self):
        names = {r.name for r in policy.init().registered_rules.values()}
        self.assertEqual(set(EXPECTED), names - {'context_is_admin'})

    def test_personas(self):
        for rule, allowed in EXPECTED.items():
            for persona in PERSONAS:
                self.assertEqual(
                    persona in allowed, self._allowed(rule, persona),
                    '%s for %s' % (rule, persona))

    def test_refusal_is_policy_not_authorized(self):
        error = self.assertRaises(
            exception.PolicyNotAuthorized, policy.authorize,
            _context('reader'), profile_rules.CREATE, {})
        self.assertIn(profile_rules.CREATE, str(error))

    def test_admin_check(self):
        self.assertTrue(policy.check_is_admin(_context('admin')))
        self.assertFalse(policy.check_is_admin(_context('manager')))

    def test_legacy_rules_when_new_defaults_are_off(self):
        self.policy.conf.set_override('enforce_new_defaults', False,
                                      group='oslo_policy')
        policy.reset()
        policy.init(self.policy.conf)
        with warnings.catch_warnings():
            # oslo.policy tells operators that legacy rules are in use.
            warnings.simplefilter('ignore', UserWarning)
            # The legacy owner rule lets any caller of the project in.
            self.assertTrue(self._allowed(arq_rules.GET_ONE, 'roleless'))
            self.assertFalse(self._allowed(arq_rules.GET_ONE, 'service'))
            self.assertTrue(self._allowed(device_rules.GET_ALL, 'member'))
            self.assertFalse(self._allowed(device_rules.ENABLE, 'manager'))

    def test_rules_document_operations_and_scope(self):
        for rule in policy.init().registered_rules.values():
            if rule.name == 'context_is_admin':
                continue
            self.assertTrue(rule.operations, rule.name)
            self.assertEqual(['project'], rule.scope_types, rule.name)
            self.assertIsNotNone(rule.deprecated_rule, rule.name)
