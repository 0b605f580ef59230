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
"""HTTP errors: the one table from domain exceptions to status codes, and
the middleware that gives every error response the contract's body.

The body is ``{"error_message": "<json>"}`` where the inner JSON is
``{"faultcode": "Client" | "Server", "faultstring": <message>,
"debuginfo": null}``; clients such as openstacksdk show ``faultstring``.
A response never carries a traceback. A few refusals have a truer
status from a later microversion (:data:`STATUS_FROM_VERSION`).
"""

import json

from oslo_db import exception as db_exc
from oslo_log import log
import webob
from webob import exc as webob_exc

from cyborg.api import microversion
from cyborg import exception
from cyborg.i18n import _

LOG = log.getLogger(__name__)

#: Exception family -> HTTP status. The first matching family wins.
STATUS_BY_FAMILY = (
    (exception.Invalid, 400),
    (exception.Forbidden, 403),
    (exception.NotFound, 404),
    (exception.NotAcceptable, 406),
    (exception.Conflict, 409),
    (exception.Locked, 423),
    (exception.HostFailure, 502),
    (exception.ServiceUnavailable, 503),
    # The database is unreachable or dropped the connection (raised here
    # on a read, or by the conductor on a write): the client may retry.
    (db_exc.DBConnectionError, 503),
)

#: Refusals whose status changed with a microversion: (exception, the
#: microversion, the status from it on; the family's before). The
#: request is well formed; what it names is missing, or cannot take the
#: call, which no document of the API can tell beforehand.
STATUS_FROM_VERSION = (
    (exception.MarkerNotFound, microversion.NAMED_OBJECTS, 404),
    (exception.MissingReference, microversion.NAMED_OBJECTS, 404),
    (exception.NotProgrammable, microversion.NAMED_OBJECTS, 409),
)

DATABASE_UNAVAILABLE = _('The database cannot be reached for now; try the '
                         'request again later.')
UNEXPECTED = _('An unexpected error prevented the request from being '
               'served; the service log has the details.')


def status_of(exc, version=None):
    """The HTTP status for a domain exception (500 if it has none).

    :param version: the request's microversion, if known.
    """
    for family, since, status in STATUS_FROM_VERSION:
        if isinstance(exc, family) and version is not None and \
                version >= since:
            return status
    for family, status in STATUS_BY_FAMILY:
        if isinstance(exc, family):
            return status
    return 500


def message_of(exc):
    """The message for people; never a remote traceback."""
    if isinstance(exc, exception.CyborgException):
        # Exceptions re-raised from RPC append the conductor's traceback
        # to str(); .message is the message alone.
        return exc.message
    if isinstance(exc, db_exc.DBConnectionError):
        # Its own text may name the database server.
        return DATABASE_UNAVAILABLE
    return UNEXPECTED


def fault_body(status, message):
    """The contract's error document for ``status`` and ``message``."""
    fault = {'faultcode': 'Client' if status < 500 else 'Server',
             'faultstring': message, 'debuginfo': None}
    return json.dumps({'error_message': json.dumps(fault)}).encode()


def response_for(exc, version=None):
    """A webob response for an exception raised while serving a request.

    :param version: the request's microversion, if known.
    """
    if isinstance(exc, webob_exc.HTTPException):
        status, message = exc.status_int, exc.detail or exc.explanation
    else:
        status = status_of(exc, version)
        if isinstance(exc, db_exc.DBConnectionError):
            # The driver's message: str() of one raised in the conductor
            # holds the conductor's traceback too.
            LOG.error('Request failed, the database cannot be reached: %s',
                      exc.args[0] if exc.args else '')
        elif not isinstance(exc, exception.CyborgException):
            LOG.exception('Unexpected error while serving a request')
        elif status >= 500:
            LOG.error('Request failed: %s', exc.message)
        message = message_of(exc)
    response = webob.Response(status=status, body=fault_body(status,
                                                             message),
                              content_type='application/json',
                              charset='UTF-8')
    if status == 405 and isinstance(exc, webob_exc.HTTPException):
        response.allow = exc.allow
    return response


def _formatted(body):
    try:
        return 'error_message' in json.loads(body)
    except (ValueError, TypeError):
        return False


def _message_in(body, status):
    """Best human message in an error body made by other middleware."""
    text = body.decode('utf-8', 'replace').strip()
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        # keystonemiddleware: {"error": {"message": ...}}
        inner = doc.get('error', doc)
        if isinstance(inner, dict) and inner.get('message'):
            return str(inner['message'])
    return text or webob_exc.status_map[status].title


class ErrorFormatter:
    """WSGI middleware: any error response gets the contract's body.

    The pecan app already answers in that form; this catches the errors
    that middleware further in (authentication, CORS) returns in its own
    form, and any exception that escapes them.
    """

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        captured = {}

        def capture(status, headers, exc_info=None):
            captured['status'] = status
            captured['headers'] = headers
            return lambda data: captured.setdefault('written', []).append(
                data)

        try:
            chunks = self.app(environ, capture)
            try:
                body = b''.join(captured.pop('written', [])) + b''.join(
                    chunks)
            finally:
                if hasattr(chunks, 'close'):
                    chunks.close()
        except Exception as e:
            return response_for(e)(environ, start_response)
        status = int(captured['status'].split(' ', 1)[0])
        headers = captured['headers']
        if status >= 400 and environ.get('REQUEST_METHOD') != 'HEAD' \
                and not _formatted(body):
            body = fault_body(status, _message_in(body, status))
            headers = [(k, v) for k, v in headers
                       if k.lower() not in ('content-type',
                                            'content-length')]
            headers += [('Content-Type', 'application/json'),
                        ('Content-Length', str(len(body)))]
        start_response(captured['status'], headers)
        return [body]
