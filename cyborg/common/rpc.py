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
"""oslo.messaging plumbing: one transport, clients, servers, serializer.

RabbitMQ in production. Servers use oslo.messaging's threading executor:
no eventlet.

On ``fake://`` (the all-in-one process, ``cyborg-all-in-one``, and the
fast tests) clients and servers are those of
:mod:`cyborg.common.local_dispatch`: a call runs the endpoint that a
server of this process serves, with what RabbitMQ would carry (serialized
copies, the context without credentials, the version checked, exceptions
as a remote caller gets them), without a broker, a driver or polling.
Notifications on ``fake://`` stay on oslo.messaging's fake driver.
"""

import functools
import threading
from urllib import parse

from oslo_db import exception as db_exc
import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts
from oslo_messaging.rpc import dispatcher

from cyborg.common import local_dispatch
from cyborg.conf import opts
from cyborg import context as cyborg_context
from cyborg import exception
from cyborg.i18n import _

TRANSPORT = None
#: The process's notifier; None while notifications are off.
NOTIFIER = None
#: A conductor's transports to its agents, by URL (see agent_transport).
_AGENT_TRANSPORTS = {}
_AGENT_LOCK = threading.Lock()
_CONF = None
#: The transports of this process on ``fake://``: their clients and servers
#: are those of :mod:`cyborg.common.local_dispatch`.
_IN_PROCESS = []
#: oslo.messaging's options that the local clients and servers read (its
#: own clients and servers register them).
_LOCAL_OPTS = ('rpc_response_timeout', 'executor_thread_pool_size')
# Domain errors raised by a server reach the caller as themselves, not as
# a generic RemoteError; so do oslo.db's, so that the API answers a
# conductor's lost database as unavailable, not as a bug.
_EXMODS = [exception.__name__, db_exc.__name__]


def init(conf, url=None):
    """Create the process's RPC transport, and its notifier.

    :param url: a transport URL; by default ``[DEFAULT] transport_url``.
    """
    global TRANSPORT, _CONF
    messaging.set_transport_defaults(
        control_exchange=opts.CONTROL_EXCHANGE)
    _CONF = conf
    TRANSPORT = _rpc_transport(conf, url)
    init_notifier(conf, url=url)


def agent_transport(host):
    """The transport on which a conductor meets the agent of ``host``.

    ``[conductor] agent_transport_url`` with ``{host}`` replaced by the
    host's name (quoted for a URL) when that is set: agents then live in
    virtual hosts apart from the API's topic, each host's in its own when
    the URL names ``{host}``. Else the process's transport.
    """
    template = _CONF.conductor.agent_transport_url if _CONF else None
    if not template:
        return _transport()
    url = template.replace('{host}', parse.quote(host, safe=''))
    with _AGENT_LOCK:
        if url not in _AGENT_TRANSPORTS:
            _AGENT_TRANSPORTS[url] = _rpc_transport(_CONF, url)
        return _AGENT_TRANSPORTS[url]


def in_process(conf, url=None):
    """Whether ``url`` (by default ``[DEFAULT] transport_url``) is fake://.

    oslo.messaging's in-process transport: only servers of the same
    process hear its messages, which :mod:`cyborg.common.local_dispatch`
    carries.
    """
    return messaging.TransportURL.parse(conf, url).transport == 'fake'


def _rpc_transport(conf, url):
    transport = messaging.get_rpc_transport(conf, url=url,
                                            allowed_remote_exmods=_EXMODS)
    if in_process(conf, url):
        conf.register_opts([o for o in dict(messaging_opts.list_opts())[None]
                            if o.name in _LOCAL_OPTS])
        _IN_PROCESS.append(transport)
    return transport


def _cleanup_transport(transport):
    transport.cleanup()
    if any(t is transport for t in _IN_PROCESS):
        _IN_PROCESS[:] = [t for t in _IN_PROCESS if t is not transport]


def _notification_opts():
    return dict(messaging_opts.list_opts())['oslo_messaging_notifications']


def init_notifier(conf, url=None):
    """Create the process's notifier, when a notification driver is set.

    It is built from the ``[oslo_messaging_notifications]`` options:
    with no ``driver`` (or only ``noop``) there is no notifier, and no
    notification is built. Notifications go to that group's
    ``transport_url``, else to ``url``, else to ``[DEFAULT]
    transport_url``.
    """
    global NOTIFIER
    cleanup_notifier()
    conf.register_opts(_notification_opts(),
                       group='oslo_messaging_notifications')
    options = conf.oslo_messaging_notifications
    if not set(options.driver) - {'noop'}:
        return
    url = options.transport_url or url or conf.transport_url
    NOTIFIER = messaging.Notifier(
        messaging.get_notification_transport(conf, url=url),
        serializer=RequestContextSerializer(
            messaging.JsonPayloadSerializer()))


def get_notifier(publisher_id):
    """The notifier as ``publisher_id``; None while notifications are off."""
    if NOTIFIER is None:
        return None
    return NOTIFIER.prepare(publisher_id=publisher_id)


def cleanup_notifier():
    """Close the notifier's transport; notifications are off after it."""
    global NOTIFIER
    if NOTIFIER is not None:
        NOTIFIER.transport.cleanup()
    NOTIFIER = None


def cleanup():
    global TRANSPORT
    if TRANSPORT is not None:
        _cleanup_transport(TRANSPORT)
    TRANSPORT = None
    cleanup_agent_transports()
    cleanup_notifier()


def cleanup_agent_transports():
    """Close the transports of :func:`agent_transport`."""
    with _AGENT_LOCK:
        for transport in _AGENT_TRANSPORTS.values():
            _cleanup_transport(transport)
        _AGENT_TRANSPORTS.clear()


class RequestContextSerializer(messaging.Serializer):
    """Carries the request context, and entities through ``base``.

    ``base`` is the versioned-object serializer; the RPC API modules pass
    :class:`cyborg.objects.base.CyborgObjectSerializer`.

    The context goes without the caller's token (nor any other
    credential): every listener of a notification, every agent of a
    compute host and every conductor would otherwise hold the token of
    whoever made the request, an administrator's included, and could act
    as them. No server needs it: each calls other services with its own
    credentials. The one exception, ``with_token``, is for
    openstack-cyborg 17.0.0's agents, which download bitstreams with the
    token they are sent: its client puts a token of the conductor's
    ``[glance]`` credentials there, and only when an operator asks
    (``[conductor] cyborg17_agents_glance_token``).
    """

    def __init__(self, base, with_token=False):
        self._base = base
        self._with_token = with_token

    def serialize_entity(self, context, entity):
        return self._base.serialize_entity(context, entity)

    def deserialize_entity(self, context, entity):
        return self._base.deserialize_entity(context, entity)

    def serialize_context(self, context):
        values = context.to_dict(credentials=False)
        if self._with_token:
            values['auth_token'] = context.auth_token
        return values

    def deserialize_context(self, context):
        return cyborg_context.RequestContext.from_dict(context)


def _transport():
    if TRANSPORT is None:
        raise RuntimeError('cyborg.common.rpc.init() was not called')
    return TRANSPORT


def _is_in_process(transport):
    return any(t is transport for t in _IN_PROCESS)


def get_client(target, serializer, version_cap=None, mandatory=False,
               transport=None, with_token=False):
    """An RPC client of ``target``, on ``transport`` or the process's.

    On ``fake://``, a client of the servers of this process
    (:class:`cyborg.common.local_dispatch.Client`).

    :param mandatory: a message that no queue takes fails at once with
        ``MessageUndeliverable`` (RabbitMQ's mandatory flag), rather than
        being dropped and its call timing out; on ``fake://``, a message
        to a server that no server of this process serves.
    :param with_token: the context's token travels too (see
        :class:`RequestContextSerializer`).
    """
    transport = transport or _transport()
    serializer = RequestContextSerializer(serializer, with_token)
    if _is_in_process(transport):
        return local_dispatch.Client(
            _CONF, target, serializer, opts.CONTROL_EXCHANGE,
            version_cap=version_cap, mandatory=mandatory, allowed=_EXMODS)
    return messaging.get_rpc_client(
        transport, target, version_cap=version_cap, serializer=serializer,
        transport_options=messaging.TransportOptions(
            at_least_once=mandatory))


def get_server(target, endpoints, serializer, transport=None):
    """An RPC server of ``endpoints`` on ``target``.

    On ``fake://``, a server to the clients of this process
    (:class:`cyborg.common.local_dispatch.Server`), with as many threads
    as ``[DEFAULT] executor_thread_pool_size`` allows.
    """
    transport = transport or _transport()
    serializer = RequestContextSerializer(serializer)
    if _is_in_process(transport):
        return local_dispatch.Server(
            target, endpoints, serializer, opts.CONTROL_EXCHANGE,
            workers=_CONF.executor_thread_pool_size)
    return messaging.get_rpc_server(
        transport, target, endpoints, serializer=serializer,
        access_policy=dispatcher.DefaultRPCAccessPolicy)


def call(cctxt, context, method, who, **kwargs):
    """``cctxt.call``, an unanswered call being the service unavailable.

    No server answered in time, or the broker could not deliver the call:
    the caller may try again later, so it is no failure of the request.

    :param who: who did not answer, for the error (``'no conductor'``).
    :raises ServiceUnavailable: naming ``who`` and ``method``.
    """
    try:
        return cctxt.call(context, method, **kwargs)
    except (messaging.MessagingTimeout,
            messaging.MessageDeliveryFailure) as e:
        raise exception.ServiceUnavailable(reason=_(
            '%(who)s answered %(method)s: %(error)s') % {
                'who': who, 'method': method, 'error': e}) from e


def expected_exceptions(*exceptions):
    """oslo.messaging's decorator, keeping the method's name and signature.

    Exceptions of these types are expected results of an RPC method: they
    go back to the caller without a traceback in the server's log.
    """
    decorate = messaging.expected_exceptions(*exceptions)

    def outer(func):
        return functools.wraps(func)(decorate(func))
    return outer
