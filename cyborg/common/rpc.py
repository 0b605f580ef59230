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

RabbitMQ in production; ``fake://`` serves the all-in-one process and the
fast tests, through :mod:`cyborg.common.local_rpc`. Servers use
oslo.messaging's threading executor: no eventlet.
"""

import functools
import threading
from urllib import parse

from oslo_db import exception as db_exc
import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts
from oslo_messaging.rpc import dispatcher

from cyborg.common import local_rpc
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
    TRANSPORT = messaging.get_rpc_transport(conf, url=_local(conf, url),
                                            allowed_remote_exmods=_EXMODS)
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
            _AGENT_TRANSPORTS[url] = messaging.get_rpc_transport(
                _CONF, url=_local(_CONF, url), allowed_remote_exmods=_EXMODS)
        return _AGENT_TRANSPORTS[url]


def _local(conf, url):
    """``url``, or the in-process driver's where it is ``fake://``."""
    if messaging.TransportURL.parse(conf, url).transport == 'fake':
        return local_rpc.transport_url(conf, url)
    return url


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
        messaging.get_notification_transport(conf, url=_local(conf, url)),
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
        TRANSPORT.cleanup()
    TRANSPORT = None
    cleanup_agent_transports()
    cleanup_notifier()


def cleanup_agent_transports():
    """Close the transports of :func:`agent_transport`."""
    with _AGENT_LOCK:
        for transport in _AGENT_TRANSPORTS.values():
            transport.cleanup()
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
    credentials.
    """

    def __init__(self, base):
        self._base = base

    def serialize_entity(self, context, entity):
        return self._base.serialize_entity(context, entity)

    def deserialize_entity(self, context, entity):
        return self._base.deserialize_entity(context, entity)

    def serialize_context(self, context):
        return context.to_dict(credentials=False)

    def deserialize_context(self, context):
        return cyborg_context.RequestContext.from_dict(context)


def _transport():
    if TRANSPORT is None:
        raise RuntimeError('cyborg.common.rpc.init() was not called')
    return TRANSPORT


def get_client(target, serializer, version_cap=None, mandatory=False,
               transport=None):
    """An RPC client of ``target``, on ``transport`` or the process's.

    :param mandatory: a message that no queue takes fails at once with
        ``MessageUndeliverable`` (RabbitMQ's mandatory flag), rather than
        being dropped and its call timing out.
    """
    return messaging.get_rpc_client(
        transport or _transport(), target, version_cap=version_cap,
        serializer=RequestContextSerializer(serializer),
        transport_options=messaging.TransportOptions(
            at_least_once=mandatory))


def get_server(target, endpoints, serializer, transport=None):
    return messaging.get_rpc_server(
        transport or _transport(), target, endpoints,
        serializer=RequestContextSerializer(serializer),
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
