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
"""Policy enforcement with oslo.policy; the rules are in cyborg.policies.

Controllers call :func:`authorize` with a rule name constant from
``cyborg.policies.<noun>`` and a target that carries the owner of the
object touched (``{'project_id': <owner>}``); only an object that belongs
to no project is checked as the caller's own.

As in openstack-cyborg 17.0.0, ``[oslo_policy] enforce_new_defaults`` is
False unless configured: each rule then also passes where its deprecated
legacy rule (17.0.0's) does, so a takeover with 17.0.0's configuration
and policy file unchanged decides as 17.0.0 did. Setting it to True
enforces the secure-RBAC personas alone.
"""

from oslo_log import log as logging
from oslo_policy import opts
from oslo_policy import policy

import cyborg.conf
from cyborg import exception
from cyborg import policies

CONF = cyborg.conf.CONF
LOG = logging.getLogger(__name__)

_ENFORCER = None


class _Enforcer(policy.Enforcer):
    """oslo.policy's enforcer, looking at the policy files when told to.

    oslo.policy looks for the policy file and each ``[oslo_policy]
    policy_dirs`` entry in the configuration directories before every
    check, and reads what changed. Here a check reads the files only while
    no rules are loaded; :meth:`refresh` looks at them again, and the API
    calls it once at the start of each request (its context hook). So a
    file changed, added or removed applies to the next request, and the
    checks of one request (two or more) all see the same rules.
    """

    def refresh(self):
        """Read the policy files that changed since the last look."""
        super().load_rules()

    def load_rules(self, force_reload=False):
        if force_reload or not self.rules:
            super().load_rules(force_reload)


def init(conf=CONF, policy_file=None):
    """Create the process's enforcer (once) and return it."""
    global _ENFORCER
    if _ENFORCER is None:
        # 17.0.0's default: its decisions until an operator opts in.
        # oslo.policy 6 always checks scope: it has no enforce_scope.
        opts.set_defaults(conf, enforce_new_defaults=False)
        _ENFORCER = _Enforcer(conf, policy_file=policy_file)
        # One line in the log (below) rather than a warning per rule.
        _ENFORCER.suppress_default_change_warnings = True
        _ENFORCER.register_defaults(policies.list_rules())
        if not conf.oslo_policy.enforce_new_defaults:
            LOG.warning(
                'Policy: the legacy rules of openstack-cyborg 17.0.0 apply '
                'beside the new defaults, so every decision is 17.0.0\'s. '
                'Set [oslo_policy] enforce_new_defaults = True to enforce '
                'the secure-RBAC personas alone (see the policy guide).')
    return _ENFORCER


def reset():
    global _ENFORCER
    if _ENFORCER is not None:
        _ENFORCER.clear()
    _ENFORCER = None


def refresh():
    """Apply the policy files as they are now: at the start of a request."""
    init().refresh()


def get_enforcer():
    """The ``oslo.policy.enforcer`` entry point of the oslopolicy tools."""
    CONF([], project='cyborg')
    return init()


def authorize(context, action, target):
    """Refuse ``action`` on ``target`` unless policy allows ``context``.

    A target without a ``project_id`` is an object that belongs to no
    project (a device profile, hardware): it is checked as the caller's
    own, so that the project rules (``project_reader_or_admin``, ...) ask
    for the role alone, as they did in the releases before ours.

    :raises PolicyNotAuthorized: the policy refuses it.
    """
    if 'project_id' not in target:
        target = dict(target, project_id=context.project_id)
    try:
        init().authorize(action, target, context, do_raise=True,
                         exc=exception.PolicyNotAuthorized, action=action)
    except policy.InvalidScope:
        raise exception.PolicyNotAuthorized(action=action)


def check_is_admin(context):
    """Whether the caller is an administrator (``context_is_admin``)."""
    return init().authorize(policies.base.CONTEXT_IS_ADMIN, {}, context)
