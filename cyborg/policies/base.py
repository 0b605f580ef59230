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
"""Check strings the rules of every noun are built from."""

from oslo_policy import policy

CONTEXT_IS_ADMIN = 'context_is_admin'

ADMIN = 'role:admin'
SERVICE = 'role:service'
# Objects that belong to no project (profiles, hardware) are read by a
# role in any project; objects of a project by that project only.
ANY_READER = 'role:reader'
ANY_MANAGER = 'role:manager'
PROJECT_READER = 'role:reader and project_id:%(project_id)s'
PROJECT_MEMBER = 'role:member and project_id:%(project_id)s'

ADMIN_OR_ANY_READER = '%s or %s' % (ADMIN, ANY_READER)
ADMIN_OR_ANY_MANAGER = '%s or %s' % (ADMIN, ANY_MANAGER)
ADMIN_OR_PROJECT_READER = '%s or (%s)' % (ADMIN, PROJECT_READER)
ADMIN_OR_PROJECT_MEMBER_OR_SERVICE = '%s or (%s) or %s' % (
    ADMIN, PROJECT_MEMBER, SERVICE)

# The rules of releases before secure RBAC, kept as deprecated fallbacks.
LEGACY_ANYONE = '@'
LEGACY_ADMIN = 'role:admin or role:administrator'
LEGACY_ADMIN_OR_OWNER = 'role:admin or project_id:%(project_id)s'

DEPRECATED_REASON = """
Cyborg's API policies now use the secure-RBAC personas (admin, project
manager, member and reader, and the service role). The legacy rules stay
available while [oslo_policy] enforce_new_defaults is False.
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
    ]
