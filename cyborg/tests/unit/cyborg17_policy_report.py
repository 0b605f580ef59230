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
"""openstack-cyborg 17.0.0's policy decisions, run with its own python.

``test_policy_cyborg17`` runs this file with the interpreter of the
venv where 17.0.0 is installed (isolated, so that this checkout's
``cyborg`` is not found): it reads ``{"personas": {name: {"user_id",
"project_id", "roles", "system_scope", "targets": {target name:
target}}}, "enforce_new_defaults": bool or null}`` on stdin and prints
``{rule: {persona: {target name: allowed}}}`` for every rule 17.0.0
registers.

The enforcer is built as 17.0.0's ``authorize_wsgi.init_enforcer`` builds
it (its rules in code, ``enforce_new_defaults`` False unless configured,
no policy file), and the credentials as its ``authorize_wsgi`` decorator
makes them: the context's policy values, with ``is_admin`` true when the
token has the ``admin`` role (its ContextHook).
"""

import json
import sys

from oslo_config import cfg
from oslo_policy import opts
from oslo_policy import policy

from cyborg import context
from cyborg import policies


def main():
    request = json.load(sys.stdin)
    conf = cfg.ConfigOpts()
    conf([], project='cyborg', default_config_files=[])
    opts.set_defaults(conf, enforce_new_defaults=False)
    if request.get('enforce_new_defaults') is not None:
        conf.set_override('enforce_new_defaults',
                          request['enforce_new_defaults'], 'oslo_policy')
    enforcer = policy.Enforcer(conf)
    enforcer.suppress_deprecation_warnings = True
    enforcer.suppress_default_change_warnings = True
    enforcer.register_defaults(policies.list_policies())
    enforcer.load_rules()

    creds, targets = {}, {}
    for name, persona in request['personas'].items():
        targets[name] = persona['targets']
        ctx = context.RequestContext(
            user_id=persona['user_id'], project_id=persona['project_id'],
            roles=persona['roles'], system_scope=persona['system_scope'],
            is_admin='admin' in persona['roles'])
        creds[name] = dict(ctx.to_policy_values(), is_admin=ctx.is_admin)

    decisions = {}
    for rule in enforcer.registered_rules:
        decisions[rule] = {
            name: {target_name: _allowed(enforcer, rule, target, cred)
                   for target_name, target in targets[name].items()}
            for name, cred in creds.items()}
    json.dump(decisions, sys.stdout, sort_keys=True)


def _allowed(enforcer, rule, target, creds):
    try:
        return bool(enforcer.authorize(rule, dict(target), dict(creds),
                                       do_raise=True))
    except (policy.PolicyNotAuthorized, policy.InvalidScope):
        return False


if __name__ == '__main__':
    main()
