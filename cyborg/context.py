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
"""The request context that travels from the API through RPC to workers.

It loads no database code: the agent, which has no database, uses it. The
database layer gives it its transaction attributes (``session``,
``connection``) when it is imported (:mod:`cyborg.db.api`).
"""

import copy

from oslo_context import context


#: The keys of a context's dict that are credentials: what never leaves
#: the process on the message bus (see :meth:`RequestContext.to_dict`).
CREDENTIALS = ('auth_token', 'service_token', 'auth_token_info',
               'auth_plugin')


class RequestContext(context.RequestContext):
    """Who is asking, and on behalf of which project."""

    def elevated(self):
        """Return a copy of this context with admin rights."""
        ctx = copy.copy(self)
        ctx.is_admin = True
        if 'admin' not in ctx.roles:
            ctx.roles = list(ctx.roles) + ['admin']
        return ctx

    def to_policy_values(self):
        """The credentials policy checks; ``is_admin:True`` works too.

        Policy files of the releases before ours use ``is_admin:True``.
        """
        # A plain dict: oslo.context would warn on every check that
        # reads the mapping, whether a rule uses is_admin or not.
        values = dict(super().to_policy_values())
        values['is_admin'] = self.is_admin
        return values

    def to_dict(self, credentials=True):
        """The context as a dict, with or without the caller's tokens.

        :param credentials: keep the user's token (and any other
            credential). RPC messages and notifications carry a dict
            without them: no process that reads them may act as the user
            (:class:`cyborg.common.rpc.RequestContextSerializer`).
        """
        values = super().to_dict()
        if not credentials:
            for key in CREDENTIALS:
                values.pop(key, None)
        return values

    @classmethod
    def from_dict(cls, values, **kwargs):
        kwargs.setdefault('is_admin', values.get('is_admin', False))
        return super().from_dict(values, **kwargs)


def get_admin_context():
    """A context for the service's own work (periodic tasks, start-up)."""
    return RequestContext(is_admin=True, roles=['admin'], overwrite=False)
