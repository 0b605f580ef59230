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

Every call is made as the service, with the credentials of its group;
none carries a user's token, so what a call may see or do never depends
on which user's request led to it.
"""

import threading

from keystoneauth1 import loading as ks_loading

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
