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
"""RPC between the services of one process, without a broker or a driver.

On ``[DEFAULT] transport_url = fake://`` the API, conductor and agent of
``cyborg-all-in-one`` (and the tests that run them in one process) call
the endpoints that this process serves directly, as Ironic's API calls
its local conductor's manager with ``rpc_transport = none``.
oslo.messaging's fake driver would carry the messages too, but its
servers look at their queues every 50 ms: about 55 ms a call, one call
after another, against about 1 ms here (see "Public paths only" in
doc/source/contributor/performance.rst).

What crosses is what RabbitMQ would carry, so that what works in one
process works on RabbitMQ: the context and every argument and result go
through the RPC serializer and JSON (copies; the context without
credentials); the endpoint's ``target`` version is honoured; a server
runs the call in a thread of its own pool; an exception reaches the
caller as oslo.messaging rebuilds it (itself when its module is allowed,
else a ``RemoteError`` naming its class); and a message to a server that
no server of the process serves fails at once with
``MessageUndeliverable`` when the client is mandatory (RabbitMQ's flag),
else waits for one until its timeout.
"""

import collections
from concurrent import futures
import itertools
import threading
import time
import traceback

from oslo_log import log
import oslo_messaging as messaging
from oslo_messaging.rpc import dispatcher
from oslo_serialization import jsonutils

LOG = log.getLogger(__name__)

#: The modules whose exceptions oslo.messaging always rebuilds.
_BUILTINS = 'builtins'
_ACCESS = dispatcher.DefaultRPCAccessPolicy()


def compatible(served, asked):
    """Whether a server of version ``served`` takes a message of ``asked``.

    oslo.messaging's rule: the same major version, and a minor version
    (then a revision) no higher than the server's.
    """
    if served is None:
        return True
    if asked is None:
        return False
    served = [int(p) for p in served.split('.')] + [0]
    asked = [int(p) for p in asked.split('.')] + [0]
    return served[0] == asked[0] and asked[1:3] <= served[1:3]


def _wire(message):
    """``message`` as it arrives across RabbitMQ (oslo.messaging's JSON)."""
    return jsonutils.loads(jsonutils.dumps(message))


class _Registry:
    """The servers of this process, by exchange and topic."""

    def __init__(self):
        self._changed = threading.Condition()
        self._servers = collections.defaultdict(list)
        self._turn = itertools.count()

    def add(self, server):
        with self._changed:
            self._servers[server.key].append(server)
            self._changed.notify_all()

    def remove(self, server):
        with self._changed:
            servers = self._servers[server.key]
            if server in servers:
                servers.remove(server)
            if not servers:
                del self._servers[server.key]

    def _matching(self, key, host):
        return [s for s in self._servers.get(key, ())
                if host is None or s.host == host]

    def all(self, key, host=None):
        """The servers of ``key`` (those of ``host`` if it is given)."""
        with self._changed:
            return self._matching(key, host)

    def one(self, key, host, deadline=None):
        """A server of ``key`` (of ``host`` if given), in turn; else None.

        :param deadline: a ``time.monotonic()`` until which to wait for
            one to start.
        """
        with self._changed:
            while True:
                servers = self._matching(key, host)
                if servers:
                    return servers[next(self._turn) % len(servers)]
                left = None if deadline is None else (
                    deadline - time.monotonic())
                if left is None or left <= 0:
                    return None
                self._changed.wait(left)


_SERVERS = _Registry()


def _key(target, default_exchange):
    return (target.exchange or default_exchange, target.topic)


class Server:
    """Endpoints served on ``target`` to the clients of this process.

    The interface of an oslo.messaging RPC server (``start``, ``stop``,
    ``wait``); calls run in a pool of ``workers`` threads, as its
    threading executor runs them.
    """

    def __init__(self, target, endpoints, serializer, default_exchange,
                 workers):
        self.key = _key(target, default_exchange)
        self.host = target.server
        self._endpoints = endpoints
        self._serializer = serializer
        self._workers = workers
        self._executor = None
        self._serving = False
        self._lock = threading.Lock()

    def start(self):
        with self._lock:
            if self._executor is None:
                # The standard library's pool: an idle thread waits for
                # work without polling, and a stop wakes it at once.
                self._executor = futures.ThreadPoolExecutor(
                    max_workers=self._workers,
                    thread_name_prefix='rpc-%s' % self.key[1])
            self._serving = True
        _SERVERS.add(self)

    def stop(self):
        """Take no more messages; those taken run on (see :meth:`wait`)."""
        _SERVERS.remove(self)
        with self._lock:
            self._serving = False

    def wait(self):
        """Wait for the messages taken to be answered."""
        with self._lock:
            executor, self._executor = self._executor, None
            self._serving = False
        if executor is not None:
            executor.shutdown(wait=True)

    def submit(self, message):
        """Run ``message`` in the pool; None once the server has stopped."""
        with self._lock:
            if not self._serving:
                return None
            return self._executor.submit(self._handle, message)

    def _handle(self, message):
        """``message``'s answer, or what it raised with the traceback.

        As an oslo.messaging server replies: ``(answer, None)`` or
        ``(None, (error, traceback lines))``, the traceback being the
        server's only.
        """
        try:
            return _wire(self._dispatch(message)), None
        except messaging.ExpectedException as e:
            LOG.debug('Expected exception during message handling (%s)', e)
            return None, (e.exc_info[1],
                          traceback.format_exception(*e.exc_info))
        except Exception as e:
            LOG.exception('Exception during message handling')
            return None, (e, traceback.format_exception(
                type(e), e, e.__traceback__))

    def _dispatch(self, message):
        method = message['method']
        version = message.get('version', '1.0')
        found = False
        for endpoint in self._endpoints:
            target = getattr(endpoint, 'target', None) or messaging.Target()
            if (message.get('namespace') not in target.accepted_namespaces or
                    not compatible(target.version or '1.0', version)):
                continue
            if hasattr(endpoint, method) and _ACCESS.is_allowed(endpoint,
                                                                method):
                ctxt = self._serializer.deserialize_context(
                    message['context'])
                kwargs = {name: self._serializer.deserialize_entity(ctxt, arg)
                          for name, arg in message['args'].items()}
                return self._serializer.serialize_entity(
                    ctxt, getattr(endpoint, method)(ctxt, **kwargs))
            found = True
        if found:
            raise messaging.NoSuchMethod(method)
        raise messaging.UnsupportedVersion(version, method=method)


def _delivered(error, trace, allowed):
    """``error``, raised by an endpoint, as its caller across RabbitMQ gets it.

    oslo.messaging rebuilds an exception of a builtin or allowed module
    (``allowed_remote_exmods``) as its own class, and any other as a
    ``RemoteError`` naming its class, with the server's traceback
    (``trace``).
    """
    module = type(error).__module__
    if module == _BUILTINS or module in allowed:
        return error
    return messaging.RemoteError(type(error).__name__, str(error), trace)


class Client:
    """A client of the servers of this process.

    The interface of ``oslo_messaging.RPCClient`` that Cyborg uses:
    ``prepare``, ``call``, ``cast``, ``can_send_version``. ``retry``,
    ``call_monitor_timeout`` and ``transport_options`` are taken and
    ignored: a server of the same process neither vanishes unheard nor
    sits behind a broker.

    :param timeout: seconds a call waits for a server and its answer;
        None is ``[DEFAULT] rpc_response_timeout``.
    :param allowed: modules whose exceptions reach the caller as
        themselves (``allowed_remote_exmods``).
    """

    _TARGET = ('exchange', 'topic', 'namespace', 'version', 'server',
               'fanout')
    _IGNORED = ('retry', 'call_monitor_timeout', 'transport_options')

    def __init__(self, conf, target, serializer, default_exchange,
                 version_cap=None, mandatory=False, timeout=None,
                 allowed=()):
        self.conf = conf
        self.target = target
        self.serializer = serializer
        self.version_cap = version_cap
        self.mandatory = mandatory
        self.timeout = timeout
        self._default_exchange = default_exchange
        self._allowed = tuple(allowed)

    def prepare(self, **kwargs):
        """A client of this one's target with some of it changed."""
        unknown = set(kwargs) - set(self._TARGET + self._IGNORED +
                                    ('timeout', 'version_cap'))
        if unknown:
            raise TypeError('prepare() got unexpected arguments: %s' %
                            ', '.join(sorted(unknown)))
        target = self.target(**{k: v for k, v in kwargs.items()
                                if k in self._TARGET})
        return Client(self.conf, target, self.serializer,
                      self._default_exchange,
                      version_cap=kwargs.get('version_cap', self.version_cap),
                      mandatory=self.mandatory,
                      timeout=kwargs.get('timeout', self.timeout),
                      allowed=self._allowed)

    def can_send_version(self, version=None):
        """Whether the version cap lets a message of ``version`` go.

        :param version: by default the target's.
        """
        if version is None:
            version = self.target.version
        return not self.version_cap or compatible(self.version_cap, version)

    def _message(self, ctxt, method, kwargs):
        version = self.target.version
        if not self.can_send_version(version):
            raise messaging.RPCVersionCapError(version=version,
                                               version_cap=self.version_cap)
        message = {
            'method': method, 'namespace': self.target.namespace,
            'context': self.serializer.serialize_context(ctxt),
            'args': {name: self.serializer.serialize_entity(ctxt, arg)
                     for name, arg in kwargs.items()}}
        if version is not None:
            message['version'] = version
        return _wire(message)

    def _undeliverable(self, message):
        routing_key = self.target.topic
        if self.target.server:
            routing_key = '%s.%s' % (routing_key, self.target.server)
        return messaging.MessageUndeliverable(
            None, self.target.exchange or self._default_exchange,
            routing_key, message)

    def call(self, ctxt, method, **kwargs):
        """Run ``method`` on a server of the target; return its answer.

        :raises MessageUndeliverable: no server serves the target and the
            client is mandatory.
        :raises MessagingTimeout: no server served it, or none answered,
            within the timeout.
        """
        if self.target.fanout:
            raise messaging.InvalidTarget('A call cannot be used with fanout',
                                          self.target)
        message = self._message(ctxt, method, kwargs)
        timeout = self.timeout
        if timeout is None:
            timeout = self.conf.rpc_response_timeout
        deadline = time.monotonic() + timeout
        key = _key(self.target, self._default_exchange)
        future = None
        while future is None:
            server = _SERVERS.one(
                key, self.target.server,
                deadline=None if self.mandatory else deadline)
            if server is None:
                if self.mandatory:
                    raise self._undeliverable(method)
                raise messaging.MessagingTimeout(
                    'No reply on topic %s' % self.target.topic)
            # None: it stopped since it was found; look again.
            future = server.submit(message)
        try:
            answer, failure = future.result(
                timeout=max(0, deadline - time.monotonic()))
        except futures.TimeoutError:
            raise messaging.MessagingTimeout(
                'No reply on topic %s' % self.target.topic) from None
        if failure is not None:
            raise _delivered(*failure, self._allowed)
        return self.serializer.deserialize_entity(ctxt, answer)

    def cast(self, ctxt, method, **kwargs):
        """Have ``method`` run on a server of the target, without waiting.

        A fanout target's message goes to each of its servers. A message
        that no server takes is dropped, as RabbitMQ drops it, unless the
        client is mandatory.

        :raises MessageUndeliverable: no server serves the target and the
            client is mandatory.
        """
        message = self._message(ctxt, method, kwargs)
        key = _key(self.target, self._default_exchange)
        if self.target.fanout:
            servers = _SERVERS.all(key)
        else:
            server = _SERVERS.one(key, self.target.server)
            servers = [server] if server is not None else []
        taken = [s for s in servers if s.submit(message) is not None]
        if not taken:
            if self.mandatory:
                raise self._undeliverable(method)
            LOG.debug('No server of this process serves %(topic)s.%(server)s:'
                      ' %(method)s dropped', {
                          'topic': self.target.topic,
                          'server': self.target.server, 'method': method})
