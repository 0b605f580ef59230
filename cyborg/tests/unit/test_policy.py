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
"""Persona tests of the policy rules, their legacy fallbacks, and policy
files written for the releases before ours.

Here with ``[oslo_policy] enforce_new_defaults = True``, unless a test
says otherwise; the default (False) decides as 17.0.0 did, which
``test_policy_cyborg17`` compares with 17.0.0 itself.
"""

import os
import warnings

import fixtures as test_fixtures

from cyborg import context
from cyborg import exception
from cyborg.policies import accelerator_request as arq_rules
from cyborg.policies import attribute as attribute_rules
from cyborg.policies import deployable as deployable_rules
from cyborg.policies import device as device_rules
from cyborg.policies import device_profile as profile_rules
from cyborg.policies import metric as metric_rules
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
    device_rules.RELEASE: ADMIN,
    deployable_rules.GET_ALL: MANAGERS,
    deployable_rules.GET_ONE: MANAGERS,
    deployable_rules.PROGRAM: ADMIN,
    attribute_rules.GET_ALL: MANAGERS,
    attribute_rules.GET_ONE: MANAGERS,
    attribute_rules.CREATE: ADMIN,
    attribute_rules.DELETE: ADMIN,
    metric_rules.GET: ADMIN,
}


#: The rules of objects that belong to no project: the controllers give
#: them a target without an owner.
OWNERLESS = {rule for rule in EXPECTED
             if not rule.startswith('cyborg:arq:')}

#: The base rules of the releases before ours, with their check strings:
#: policy files written for them refer to these names.
EARLIER_BASE_RULES = {
    'admin_api': 'role:admin',
    'project_admin_api': 'role:admin and project_id:%(project_id)s',
    'project_member_api': 'role:member and project_id:%(project_id)s',
    'project_reader_api': 'role:reader and project_id:%(project_id)s',
    'project_manager_api': 'role:manager and project_id:%(project_id)s',
    'service_api': 'role:service',
    'project_member_or_admin': 'rule:project_member_api or rule:admin_api',
    'project_reader_or_admin': 'rule:project_reader_api or rule:admin_api',
    'project_manager_or_admin':
        'rule:project_manager_api or rule:admin_api',
    'project_member_or_service':
        'rule:project_member_api or rule:service_api',
    'public_api': 'is_public_api:True',
    'allow': '@',
    'deny': '!',
    'default': 'rule:admin_or_owner',
    'is_admin': 'rule:admin_api',
    'admin_or_owner': 'is_admin:True or project_id:%(project_id)s',
    'admin_or_user': 'is_admin:True or user_id:%(user_id)s',
}

#: The deprecated check strings of the releases before ours, for the
#: rules we both have (for those they gave none, their default).
EARLIER_DEPRECATED = {
    profile_rules.GET_ALL: 'rule:admin_or_owner',
    profile_rules.GET_ONE: 'rule:admin_or_owner',
    profile_rules.CREATE: 'rule:is_admin',
    profile_rules.DELETE: 'rule:is_admin',
    arq_rules.GET_ALL: 'rule:admin_or_owner',
    arq_rules.GET_ONE: 'rule:admin_or_owner',
    # Theirs is rule:project_member_or_admin, which falls back in turn
    # to admin_or_owner: anyone of the target's project.
    arq_rules.CREATE: 'rule:project_member_or_admin',
    arq_rules.UPDATE: 'rule:admin_or_owner',
    arq_rules.DELETE: 'rule:admin_or_owner',
    device_rules.GET_ALL: 'rule:admin_api',
    device_rules.GET_ONE: 'rule:admin_api',
    device_rules.ENABLE: 'rule:admin_api',
    device_rules.DISABLE: 'rule:admin_api',
    deployable_rules.GET_ALL: 'rule:admin_api',
    deployable_rules.GET_ONE: 'rule:admin_api',
    deployable_rules.PROGRAM: 'rule:admin_api',
    attribute_rules.GET_ALL: 'rule:admin_api',
    attribute_rules.GET_ONE: 'rule:admin_api',
    attribute_rules.CREATE: 'rule:admin_api',
    attribute_rules.DELETE: 'rule:admin_api',
}

HARDWARE_READS = (device_rules.GET_ALL, device_rules.GET_ONE,
                  deployable_rules.GET_ALL, deployable_rules.GET_ONE,
                  attribute_rules.GET_ALL, attribute_rules.GET_ONE)


def _context(persona, project_id=None, roles=None):
    if persona in PERSONAS:
        project_id, roles = PERSONAS[persona]
    return context.RequestContext(user_id=persona, project_id=project_id,
                                  roles=roles)


def _target(rule):
    return {} if rule in OWNERLESS else {'project_id': OWNER}


class TestPolicy(base.TestCase):

    def setUp(self):
        super().setUp()
        self.policy = self.useFixture(fixtures.Policy(
            enforce_new_defaults=True))

    def _allowed(self, rule, persona, ctx=None, new_request=True):
        if new_request:
            policy.refresh()
        try:
            policy.authorize(ctx or _context(persona), rule, _target(rule))
        except exception.PolicyNotAuthorized:
            return False
        return True

    def _reload(self, **overrides):
        for name, value in overrides.items():
            self.policy.conf.set_override(name, value, group='oslo_policy')
        policy.reset()
        policy.init(self.policy.conf)

    def test_every_rule_is_tested(self):
        names = {r.name for r in policy.init().registered_rules.values()}
        self.assertEqual(set(EXPECTED), names - {'context_is_admin'} -
                         set(EARLIER_BASE_RULES))

    def test_base_rules_of_earlier_releases(self):
        registered = policy.init().registered_rules
        self.assertEqual(EARLIER_BASE_RULES, {
            name: registered[name].check_str for name in EARLIER_BASE_RULES
            if name in registered})

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

    def test_deprecated_rules_are_those_of_earlier_releases(self):
        registered = policy.init().registered_rules
        self.assertEqual(EARLIER_DEPRECATED, {
            name: registered[name].deprecated_rule.check_str
            for name in EARLIER_DEPRECATED})

    def test_legacy_rules_when_new_defaults_are_off(self):
        with warnings.catch_warnings():
            # oslo.policy tells operators that legacy rules are in use,
            # as it loads them.
            warnings.simplefilter('ignore', UserWarning)
            self._reload(enforce_new_defaults=False)
            # The legacy owner rule lets any caller of the project in.
            self.assertTrue(self._allowed(arq_rules.GET_ONE, 'roleless'))
            self.assertFalse(self._allowed(arq_rules.GET_ONE, 'service'))
            self.assertTrue(self._allowed(profile_rules.GET_ALL, 'roleless'))
            self.assertFalse(self._allowed(profile_rules.CREATE, 'manager'))
            self.assertFalse(self._allowed(device_rules.ENABLE, 'manager'))
            # 17.0.0's project_manager_or_admin falls back to
            # admin_or_owner on the caller's own project (hardware has no
            # owner): anyone with a project reads the hardware.
            for rule in HARDWARE_READS:
                self.assertEqual(
                    set(PERSONAS),
                    {p for p in PERSONAS if self._allowed(rule, p)}, rule)

    def test_legacy_admin_is_the_admin_role(self):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', UserWarning)
            self._reload(enforce_new_defaults=False)
            self.assertFalse(self._allowed(
                device_rules.ENABLE, None,
                _context(None, OWNER, ['administrator'])))

    def _policy_file(self, text):
        path = os.path.join(self.useFixture(test_fixtures.TempDir()).path,
                            'policy.yaml')
        with open(path, 'w') as f:
            f.write(text)
        self._reload(policy_file=path)

    def test_policy_file_of_earlier_releases(self):
        # Written for the releases before ours: base rules and rules
        # overridden by their names.
        self._policy_file(
            '"admin_api": "role:cloud_admin"\n'
            '"project_reader_api": "role:observer and '
            'project_id:%(project_id)s"\n'
            '"cyborg:device_profile:create": "rule:project_member_or_admin"\n'
            '"cyborg:arq:get_one": "rule:admin_or_owner"\n'
            '"cyborg:device:get_all": "rule:deny"\n')
        cloud_admin = _context(None, OWNER, ['cloud_admin'])
        observer = _context(None, 'another-project', ['observer'])
        # admin_api moves every administrator rule, and who is admin.
        self.assertTrue(self._allowed(device_rules.ENABLE, None,
                                      cloud_admin))
        self.assertFalse(self._allowed(device_rules.ENABLE, 'admin'))
        self.assertTrue(policy.check_is_admin(cloud_admin))
        self.assertFalse(policy.check_is_admin(_context('admin')))
        # project_reader_api moves the reader rules.
        self.assertTrue(self._allowed(profile_rules.GET_ALL, None, observer))
        self.assertFalse(self._allowed(profile_rules.GET_ALL, 'reader'))
        # Rules overridden by name, with the base rules.
        self.assertTrue(self._allowed(profile_rules.CREATE, 'member'))
        self.assertFalse(self._allowed(profile_rules.CREATE, 'reader'))
        self.assertTrue(self._allowed(arq_rules.GET_ONE, 'roleless'))
        self.assertFalse(self._allowed(arq_rules.GET_ONE, 'other_member'))
        self.assertFalse(self._allowed(device_rules.GET_ALL, None,
                                       cloud_admin))
        # Rules the file leaves alone keep their defaults.
        self.assertTrue(self._allowed(device_rules.GET_ONE, 'manager'))

    def test_changed_policy_file_applies_without_restart(self):
        self._policy_file('"cyborg:device:get_all": "rule:deny"\n')
        self.assertFalse(self._allowed(device_rules.GET_ALL, 'admin'))
        path = policy.init().policy_path
        with open(path, 'w') as f:
            f.write('"cyborg:device:get_all": "@"\n')
        # A later modification time, however fast the file was rewritten.
        stat = os.stat(path)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        self.assertTrue(self._allowed(device_rules.GET_ALL, 'roleless'))

    def test_a_request_sees_one_set_of_rules(self):
        # The files are looked at as a request starts: a change during the
        # request applies from the next one.
        self._policy_file('"cyborg:device:get_all": "rule:deny"\n')
        request = _context('admin')
        self.assertFalse(self._allowed(device_rules.GET_ALL, None, request))
        path = policy.init().policy_path
        with open(path, 'w') as f:
            f.write('"cyborg:device:get_all": "@"\n')
        stat = os.stat(path)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        self.assertFalse(self._allowed(device_rules.GET_ALL, None, request,
                                       new_request=False))
        self.assertTrue(self._allowed(device_rules.GET_ALL, 'admin'))

    def test_a_policy_file_added_later_is_found(self):
        # Looked for in the configuration directories at each request.
        directory = self.useFixture(test_fixtures.TempDir()).path
        config_file = os.path.join(directory, 'cyborg.conf')
        open(config_file, 'w').close()
        self.policy.conf([], project='cyborg',
                         default_config_files=[config_file])
        self._reload()
        self.assertTrue(self._allowed(device_rules.GET_ALL, 'admin'))
        with open(os.path.join(directory, 'policy.yaml'), 'w') as f:
            f.write('"cyborg:device:get_all": "rule:deny"\n')
        self.assertFalse(self._allowed(device_rules.GET_ALL, 'admin'))

    def test_rules_document_operations_and_scope(self):
        for rule in policy.init().registered_rules.values():
            if rule.name == 'context_is_admin' or \
                    rule.name in EARLIER_BASE_RULES:
                continue
            self.assertTrue(rule.operations, rule.name)
            self.assertEqual(['project'], rule.scope_types, rule.name)
            self.assertIsNotNone(rule.deprecated_rule, rule.name)
