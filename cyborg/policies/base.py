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
"""The base rules every noun's rules are built from.

They carry the names and check strings of the releases before ours, so
that a ``policy.yaml`` written for them keeps working: overriding
``admin_api`` or ``project_reader_api`` there changes every rule built on
it here too, and rules may refer to any of them.

A target always has a ``project_id``: the owner of the object touched
(an ARQ's project), or, for objects that belong to no project (device
profiles and hardware), the caller's own project (see
:func:`cyborg.policy.authorize`). So ``project_reader_or_admin`` on a
profile means "a reader in any project, or an administrator".

The four ``project_*_or_*`` base rules carry openstack-cyborg 17.0.0's
deprecated fallback, ``is_admin:True or project_id:%(project_id)s``, as
it declared them: while ``[oslo_policy] enforce_new_defaults`` is False
(the default, as in 17.0.0) each of them, and every rule built on it,
also lets in anyone of the target's project, so that every decision is
17.0.0's. With ``enforce_new_defaults = True`` only the personas count.
"""

from oslo_policy import policy

CONTEXT_IS_ADMIN = 'context_is_admin'

ADMIN = 'rule:admin_api'
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'
PROJECT_MANAGER_OR_ADMIN = 'rule:project_manager_or_admin'
PROJECT_MEMBER_OR_SERVICE_OR_ADMIN = (
    'rule:project_member_or_service or rule:admin_api')

# The rules of releases before secure RBAC, kept as deprecated fallbacks:
# the same check strings as 17.0.0's, rule for rule, so that while
# [oslo_policy] enforce_new_defaults is off (the default) every decision
# is 17.0.0's: no more allowed, no less.
LEGACY_ADMIN = 'rule:is_admin'
LEGACY_ADMIN_API = 'rule:admin_api'
LEGACY_ADMIN_OR_OWNER = 'rule:admin_or_owner'
#: 17.0.0's deprecated ARQ create rule (which falls back in turn).
LEGACY_PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'

#: 17.0.0's deprecated fallback of its ``project_*_or_*`` base rules
#: (the name is theirs too, though no rule is called that).
LEGACY_OWNER_FALLBACK = ('rule:admin_or_owner',
                         'is_admin:True or project_id:%(project_id)s')

#: The base rules that fall back to LEGACY_OWNER_FALLBACK.
OWNER_FALLBACK_RULES = frozenset((
    'project_reader_or_admin', 'project_member_or_admin',
    'project_manager_or_admin', 'project_member_or_service'))

#: (name, check string, description) of the base rules.
BASE_RULES = (
    ('admin_api', 'role:admin', 'A cloud administrator.'),
    ('project_admin_api', 'role:admin and project_id:%(project_id)s',
     'An administrator of the target\'s project.'),
    ('project_manager_api', 'role:manager and project_id:%(project_id)s',
     'A manager of the target\'s project.'),
    ('project_member_api', 'role:member and project_id:%(project_id)s',
     'A member of the target\'s project.'),
    ('project_reader_api', 'role:reader and project_id:%(project_id)s',
     'A reader of the target\'s project.'),
    ('service_api', 'role:service',
     'Another service (Nova) acting with the service role.'),
    ('project_reader_or_admin', 'rule:project_reader_api or rule:admin_api',
     'A reader of the target\'s project, or an administrator.'),
    ('project_member_or_admin', 'rule:project_member_api or rule:admin_api',
     'A member of the target\'s project, or an administrator.'),
    ('project_manager_or_admin',
     'rule:project_manager_api or rule:admin_api',
     'A manager of the target\'s project, or an administrator.'),
    ('project_member_or_service',
     'rule:project_member_api or rule:service_api',
     'A member of the target\'s project, or another service.'),
)

#: The legacy base rules: not used by the defaults except as deprecated
#: fallbacks, kept for the policy files that refer to them.
LEGACY_BASE_RULES = (
    ('public_api', 'is_public_api:True', 'Legacy: a public route.'),
    ('allow', '@', 'Legacy: anyone.'),
    ('deny', '!', 'Legacy: no one.'),
    ('default', 'rule:admin_or_owner', 'Legacy: the default rule.'),
    ('is_admin', 'rule:admin_api', 'Legacy: a cloud administrator.'),
    ('admin_or_owner', 'is_admin:True or project_id:%(project_id)s',
     'Legacy: an administrator or anyone of the target\'s project.'),
    ('admin_or_user', 'is_admin:True or user_id:%(user_id)s',
     'Legacy: an administrator or the target\'s user.'),
)

DEPRECATED_REASON = """
Cyborg's API policies now use the secure-RBAC personas (admin, project
manager, member and reader, and the service role). The legacy rules, those
of openstack-cyborg 17.0.0, apply beside them while [oslo_policy]
enforce_new_defaults is False (the default, as in 17.0.0).
"""
DEPRECATED_SINCE = '2025.2'

PROJECT_SCOPE = ['project']


def legacy(name, check_str):
    """The deprecated pre-RBAC form of rule ``name``."""
    return policy.DeprecatedRule(name=name, check_str=check_str,
                                 deprecated_reason=DEPRECATED_REASON,
                                 deprecated_since=DEPRECATED_SINCE)


def rule(name, check_str, description, operations, legacy_check_str):
    """A documented project-scoped rule with its legacy fallback."""
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}
                    for method, path in operations],
        scope_types=PROJECT_SCOPE,
        deprecated_rule=legacy(name, legacy_check_str))


def list_rules():
    return [
        policy.RuleDefault(
            CONTEXT_IS_ADMIN, ADMIN,
            description='Who counts as an administrator: sees the '
                        'accelerator requests of every project and may '
                        'set /project_id when binding one.'),
    ] + [policy.RuleDefault(name, check_str, description=description,
                            deprecated_rule=_owner_fallback(name))
         for name, check_str, description in BASE_RULES + LEGACY_BASE_RULES]


def _owner_fallback(name):
    if name in OWNER_FALLBACK_RULES:
        return legacy(*LEGACY_OWNER_FALLBACK)
    return None
