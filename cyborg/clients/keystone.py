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
"""keystoneauth1 sessions and adapters built from a config group.

Every service Cyborg calls (Placement, Nova, Glance) is reached through
one group of keystoneauth options, so authentication, TLS, timeouts and
endpoint discovery are the operator's to set and never hard-coded.

Adapters are kept per process and reused while the group's options stay
the same: their session keeps its connections and its auth plugin keeps
its token, so a conductor does not ask Keystone for a token on every
report or bind. A changed option (a reloaded configuration) gives a new
adapter.

A call made on a user's behalf (a Glance download for the bitstream a
user's request asked for) carries that user's token instead, and, with
``[service_user] send_service_user_token``, Cyborg's own service token
beside it, as Nova sends them: the receiving service then accepts the call
even after the user's token expired during a long operation.
"""

import threading

from keystoneauth1 import loading as ks_loading
from keystoneauth1 import service_token
from keystoneauth1 import token_endpoint

SERVICE_USER_GROUP = 'service_user'

_adapters = {}
_lock = threading.Lock()


def _key(conf, group, kwargs):
    options = sorted((name, repr(value))
                     for name, value in conf[group].items())
    return id(conf), group, tuple(options), tuple(sorted(kwargs.items()))


def _kept(conf, group, kwargs, make):
    """What ``make()`` builds from ``[group]``, kept while its options are.

    Loading registers the auth plugin's options, which changes the key:
    what is made is filed under the options as they are afterwards.
    """
    with _lock:
        made = _adapters.get(_key(conf, group, kwargs))
        if made is None:
            made = make()
            _adapters[_key(conf, group, kwargs)] = made
        return made


def get_adapter(conf, group, **kwargs):
    """A keystoneauth1 Adapter for the service configured in ``[group]``.

    :param kwargs: adapter arguments that override the options, such as
        ``default_microversion`` or ``raise_exc``.
    """
    def make():
        auth = ks_loading.load_auth_from_conf_options(conf, group)
        session = ks_loading.load_session_from_conf_options(
            conf, group, auth=auth)
        return ks_loading.load_adapter_from_conf_options(
            conf, group, session=session, auth=auth, **kwargs)
    return _kept(conf, group, kwargs, make)


def _service_user_auth(conf):
    """The auth plugin of ``[service_user]``, kept while its options are."""
    return _kept(conf, SERVICE_USER_GROUP, {},
                 lambda: ks_loading.load_auth_from_conf_options(
                     conf, SERVICE_USER_GROUP))


def user_auth(conf, context, endpoint):
    """The auth of a call to ``endpoint`` made for ``context``'s user.

    :returns: the user's token, wrapped with the service token of
        ``[service_user]`` when ``send_service_user_token`` is set; None
        when the context carries no token (the service's own work, or
        noauth), for the service's own credentials.
    """
    if context is None or not context.auth_token:
        return None
    auth = token_endpoint.Token(endpoint, context.auth_token)
    if conf.service_user.send_service_user_token:
        auth = service_token.ServiceTokenAuthWrapper(
            user_auth=auth, service_auth=_service_user_auth(conf))
    return auth
