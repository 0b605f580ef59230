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
"""The cyborg-api WSGI application, its middleware built in code.

From the outside in, a request passes:

1. ``RequestId`` (oslo.middleware): names the request; every response
   carries ``x-openstack-request-id``.
2. The access log (:func:`_access_log`): one INFO line per request with
   its id, method, path, status and duration.
3. ``HTTPProxyToWSGI`` (oslo.middleware): with ``[oslo_middleware]
   enable_proxy_headers_parsing``, takes the public scheme and host from
   ``X-Forwarded-*`` so that links point where clients can reach.
4. ``CORS`` (oslo.middleware), configured in ``[cors]``.
5. The public health check (:mod:`cyborg.api.healthcheck`): a
   ``/healthcheck`` without a token is answered here.
6. Error formatting (:class:`cyborg.api.errors.ErrorFormatter`): it sits
   outside the rest so that a refused token or an oversized body, too,
   is answered with the contract's error body.
7. For an application a WSGI server loads (``open_database`` given), the
   database gate (:mod:`cyborg.api.database_gate`): until the process has
   opened its database engine, ``503`` with a message that says so; an
   API loaded before its database serves once it answers.
8. ``RequestBodySizeLimiter`` (oslo.middleware): a body over
   ``[oslo_middleware] max_request_body_size`` is refused with 413.
9. Authentication (:mod:`cyborg.api.auth`): keystonemiddleware's
   ``auth_token`` or ``noauth``, per ``[api] auth_strategy``.
10. With ``[audit] enabled``, keystonemiddleware's audit middleware: a
    CADF event per request, naming the authenticated caller.
11. The health check for a request with a token: details for admins.
    Beside it, with ``[metrics] enabled``, the Prometheus metrics
    (:mod:`cyborg.api.metric`) for callers their policy allows.
12. The URL check (:func:`_utf8_urls`): a path or query string that is
    not UTF-8 is answered 400 here, where pecan would log a traceback.
13. The pecan application, whose hooks build the request context, read
    the microversion, refuse a ``Content-Type`` that is not JSON before
    WebOb would parse a form body, and turn exceptions into error
    responses.
"""
import time
import urllib.parse

from keystonemiddleware import audit
from oslo_log import log
from oslo_middleware import cors
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import request_id
from oslo_middleware import sizelimit
import pecan
from webob import exc as webob_exc

from cyborg.api import auth
from cyborg.api.controllers import root
from cyborg.api import database_gate
from cyborg.api import errors
from cyborg.api import healthcheck
from cyborg.api import hooks
from cyborg.api import metric
from cyborg.api import microversion
from cyborg.common import rpc
from cyborg.conductor import rpcapi
import cyborg.conf
from cyborg.i18n import _
from cyborg import policy

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


class _Request(pecan.Request):
    """pecan's request, whose body pecan itself never reads as JSON.

    The controllers read the body (:func:`cyborg.api.validation.body`);
    pecan would parse it once more for :class:`_Pecan` to ignore, and log
    a traceback for a body that is not UTF-8. The body is kept in memory:
    the size limiter has capped it (``[oslo_middleware]
    max_request_body_size``), and the temporary file webob would write a
    body over 10 KiB to is never closed.
    """

    request_body_tempfile_limit = float('inf')

    @property
    def json(self):
        raise ValueError('read by the controllers')


class _Pecan(pecan.Pecan):
    """pecan, giving controllers their path segments as arguments alone.

    pecan would also fill a controller's arguments from the query string
    and from the members of a JSON body named like them: ``DELETE
    /v2/device_profiles`` with the body ``{"ident": "x"}`` would delete
    ``x``. The controllers validate the query string and the body
    themselves (:mod:`cyborg.api.validation`).
    """

    def get_args(self, state, all_params, remainder, argspec, im_self):
        return super().get_args(state, {}, remainder, argspec, im_self)


def _pecan_app():
    return _Pecan(
        root.RootController(),
        request_cls=_Request,
        hooks=[hooks.ContextHook(rpcapi.ConductorAPI()),
               hooks.MicroversionHook(),
               hooks.ContentTypeHook(),
               hooks.ErrorHook()],
        # Names may contain dots: never read a format from the path.
        guess_content_type_from_ext=False,
        force_canonical=False,
        debug=False)


def _utf8_urls(app):
    """Answer 400 to a request whose path or query is not UTF-8."""
    def check(environ, start_response):
        try:
            # WSGI gives both as latin-1 text of the raw bytes; the query
            # string may also hold %-escaped ones.
            environ.get('PATH_INFO', '').encode('latin-1').decode('utf-8')
            urllib.parse.unquote_to_bytes(environ.get(
                'QUERY_STRING', '').encode('latin-1')).decode('utf-8')
        except UnicodeError:
            return errors.response_for(webob_exc.HTTPBadRequest(
                _('The URL is not valid UTF-8.')))(environ, start_response)
        return app(environ, start_response)
    return check


def _access_log(app):
    """Log one line per request once it is answered."""
    def log_request(environ, start_response):
        started = time.monotonic()
        answered = []

        def record(status, headers, exc_info=None):
            answered.append(status.split(' ', 1)[0])
            return start_response(status, headers, exc_info)
        try:
            return app(environ, record)
        finally:
            query = environ.get('QUERY_STRING')
            LOG.info('%(id)s "%(method)s %(path)s" status: %(status)s '
                     'time: %(time).3f', {
                         'id': environ.get(request_id.ENV_REQUEST_ID),
                         'method': environ.get('REQUEST_METHOD'),
                         'path': environ.get('PATH_INFO', '') + (
                             '?' + query if query else ''),
                         'status': answered[0] if answered else '-',
                         'time': time.monotonic() - started})
    return log_request


def _audit(app, conf):
    """keystonemiddleware's audit middleware as ``[audit]`` sets it.

    It reads ``[audit_middleware_notifications]`` of the global
    configuration, which is Cyborg's.
    """
    return audit.AuditMiddleware(
        app, service_name='cyborg',
        audit_map_file=conf.audit.audit_map_file,
        ignore_req_list=','.join(conf.audit.ignore_req_list))


def setup_app(conf=CONF, open_database=None):
    """Build the WSGI application from the process's configuration.

    :func:`cyborg.common.rpc.init` must have been called.

    :param open_database: where the process has not opened its database
        engine (a WSGI server's), what opens it: requests are answered 503
        until it has (:mod:`cyborg.api.database_gate`).
    """
    policy.init(conf)
    cors.set_defaults(
        allow_headers=['X-Auth-Token', 'X-Service-Token',
                       'X-OpenStack-Request-ID', microversion.HEADER],
        expose_headers=['X-OpenStack-Request-ID', microversion.HEADER,
                        microversion.MIN_HEADER, microversion.MAX_HEADER],
        allow_methods=['GET', 'POST', 'PATCH', 'DELETE'])
    app = _utf8_urls(_pecan_app())
    app = healthcheck.authenticated(app)
    app = metric.authenticated(app, conf)
    if conf.audit.enabled:
        app = _audit(app, conf)
    app = auth.middleware(app, conf)
    app = sizelimit.RequestBodySizeLimiter(app, conf)
    if open_database is not None:
        app = database_gate.DatabaseGate(app, open_database,
                                         conf.database.retry_interval)
    app = errors.ErrorFormatter(app)
    app = healthcheck.public(app)
    app = cors.CORS(app, conf)
    app = http_proxy_to_wsgi.HTTPProxyToWSGI(app, conf)
    return request_id.RequestId(_access_log(app))


def app_factory(global_config, **local_conf):
    """openstack-cyborg's paste entry point, for its ``api-paste.ini``.

    The application, with the middleware built in code: the filters of a
    paste pipeline written for openstack-cyborg (``cors``,
    ``http_proxy_to_wsgi``, ``request_id``, ``authtoken``) run around it
    and change nothing it does (see :mod:`cyborg.api.middleware`). The
    process must be prepared first, as ``cyborg.api.wsgi_app`` does.
    """
    if rpc.TRANSPORT is None:
        raise RuntimeError(_(
            'cyborg.api.app:app_factory needs a prepared process: load the '
            'API with cyborg.api.wsgi_app.init_application() or '
            'cyborg.wsgi.api:application'))
    return setup_app(CONF)
