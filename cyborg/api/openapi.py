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
"""The OpenAPI 3.1 description of the API, built from its JSON Schemas.

Request bodies and query strings are described by the schemas the API
validates requests with, responses by the response schemas next to them
(:mod:`cyborg.api.schemas`), so the document cannot drift from the code.
``GET /v2/openapi.json`` serves it without a token. One document covers
every microversion: an operation or field that a later microversion
added says so, and the ``OpenStack-API-Version`` header picks one.
"""

import copy
import functools

from cyborg.api import microversion
from cyborg.api.schemas import accelerator_request as arq
from cyborg.api.schemas import attribute
from cyborg.api.schemas import deployable
from cyborg.api.schemas import device
from cyborg.api.schemas import device_profile
from cyborg.api.schemas import parameter_types
from cyborg.api.schemas import version

VERSION = '3.1.0'
PATH = '/v2/openapi.json'

#: The errors any authenticated call may answer, and why.
ERRORS = {
    '400': 'The request is malformed; nothing was changed.',
    '403': 'The policy does not allow the caller this call.',
    '404': 'No such resource, or no such route.',
    '405': 'The route does not take this method (at this microversion).',
    '406': 'The microversion asked for is not served, or the call needs '
           'a later one.',
    '409': 'The call conflicts with the state of a resource.',
}

#: The error of any call that the conductor carries out.
WRITE_ERRORS = {'503': 'The conductor cannot carry out the call now.'}

#: The error of a call that a host or vendor tool takes part in.
HOST_ERRORS = {'502': 'A host or vendor tool failed at its part.'}


class Operation:
    """One route and method: what it takes and what it answers.

    :param responses: {status: response schema, or None for no body}.
    :param query: {name: schema} of the query parameters, or an object
        schema of them (whose ``required`` is kept).
    :param since: the microversion that added the operation.
    :param errors: further error statuses: {status: why}.
    """

    def __init__(self, method, path, summary, responses, query=None,
                 body=None, since=None, errors=None, public=False):
        self.method = method
        self.path = path
        self.summary = summary
        self.responses = responses
        self.query = query or {}
        self.body = body
        self.since = since
        self.errors = dict(errors or {})
        self.public = public


def _list_query(schema):
    """The query parameters of a list at the newest microversion."""
    return parameter_types.list_query(
        microversion.MAX_VERSION, schema.list_query, schema.SORT_KEYS,
        getattr(schema, 'list_query_2_4', None))['properties']


def _list(collection, schema, response, key=None, errors=None):
    """``GET`` of a collection, listed under ``key`` (its name)."""
    return Operation('GET', '/v2/' + collection, 'List %s.' % collection,
                     {'200': parameter_types.collection(key or collection,
                                                        response)},
                     query=_list_query(schema), errors=errors)


_DP = '/v2/device_profiles/{uuid_or_name}'
_ARQ = '/v2/accelerator_requests'
_PROGRAM = 'Program an FPGA deployable with a bitstream image.'

OPERATIONS = (
    Operation('GET', '/', 'List the versions of the API.',
              {'200': version.list_response}, public=True),
    Operation('GET', '/v2', 'Show version 2 and its microversions.',
              {'200': version.response}, public=True),
    Operation('GET', PATH, 'This document.', {'200': {'type': 'object'}},
              public=True),
    _list('device_profiles', device_profile, device_profile.response),
    Operation('POST', '/v2/device_profiles', 'Create a device profile.',
              {'201': device_profile.response}, body=device_profile.create),
    Operation('DELETE', '/v2/device_profiles',
              'Delete the device profiles named (all or none).',
              {'204': None}, query=device_profile.delete_query),
    Operation('GET', _DP, 'Show a device profile (by name from 2.2).',
              {'200': device_profile.show_response}),
    Operation('PATCH', _DP, 'Change a device profile\'s description or '
              'groups.', {'200': device_profile.response},
              body=device_profile.patch,
              since=microversion.PROFILE_LIFECYCLE),
    Operation('DELETE', _DP, 'Delete a device profile.', {'204': None}),
    Operation('POST', _DP + '/enable', 'Enable a device profile.',
              {'204': None}, since=microversion.PROFILE_LIFECYCLE),
    Operation('POST', _DP + '/disable', 'Disable a device profile.',
              {'204': None}, since=microversion.PROFILE_LIFECYCLE),
    _list('accelerator_requests', arq, arq.response, key='arqs', errors={
        '423': 'An accelerator request of the instance is still being '
               'bound.'}),
    Operation('POST', _ARQ, 'Create the accelerator requests of a device '
              'profile.', {'201': arq.create_response}, body=arq.create),
    Operation('PATCH', _ARQ, 'Bind or unbind accelerator requests.',
              {'202': None}, body=arq.patch, errors=HOST_ERRORS),
    Operation('DELETE', _ARQ, 'Delete accelerator requests, by uuid or '
              'by instance.', {'204': None}, query=arq.delete_query,
              errors=HOST_ERRORS),
    Operation('GET', _ARQ + '/{uuid}', 'Show an accelerator request.',
              {'200': arq.response}),
    Operation('PATCH', _ARQ + '/{uuid}', 'Bind or unbind an accelerator '
              'request.', {'202': None}, body=arq.patch, errors=HOST_ERRORS),
    Operation('DELETE', _ARQ + '/{uuid}', 'Delete an accelerator '
              'request.', {'204': None}, errors=HOST_ERRORS),
    _list('devices', device, device.response),
    Operation('GET', '/v2/devices/{uuid}', 'Show a device.',
              {'200': device.response}),
    Operation('POST', '/v2/devices/{uuid}/enable', 'Enable a device.',
              {'204': None}),
    Operation('POST', '/v2/devices/{uuid}/disable', 'Put a device in '
              'maintenance.', {'204': None}),
    _list('deployables', deployable, deployable.response),
    Operation('GET', '/v2/deployables/{uuid}', 'Show a deployable.',
              {'200': deployable.response}),
    Operation('PATCH', '/v2/deployables/{uuid}/program', _PROGRAM,
              {'200': deployable.response}, body=deployable.program,
              errors=HOST_ERRORS),
    # openstacksdk repeats the uuid.
    Operation('PATCH', '/v2/deployables/{uuid}/program/{again}', _PROGRAM,
              {'200': deployable.response}, body=deployable.program,
              errors=HOST_ERRORS),
    _list('attributes', attribute, attribute.response),
    Operation('POST', '/v2/attributes', 'Create an attribute.',
              {'201': attribute.response}, body=attribute.create),
    Operation('GET', '/v2/attributes/{uuid}', 'Show an attribute.',
              {'200': attribute.response}),
    Operation('DELETE', '/v2/attributes/{uuid}', 'Delete an attribute.',
              {'204': None}),
)


def _schema(schema):
    """A JSON Schema as OpenAPI 3.1 takes it; error hints describe."""
    if isinstance(schema, dict):
        return {('description' if key == 'description_for_errors' else key):
                _schema(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_schema(value) for value in schema]
    return schema


_PATH_PARAMETERS = {
    'uuid': parameter_types.uuid,
    'again': parameter_types.uuid,
    'uuid_or_name': {'type': 'string', 'minLength': 1, 'maxLength': 255},
}

_VERSION_HEADER = {
    'name': microversion.HEADER, 'in': 'header', 'required': False,
    'description': 'The microversion to use; 2.0 without it.',
    'schema': {'type': 'string', 'enum': [
        '%s %s' % (microversion.SERVICE_TYPE, number)
        for number, _ in microversion.VERSIONS] + [
        '%s %s' % (microversion.SERVICE_TYPE, microversion.LATEST)]},
}


def _parameters(operation):
    params = [{'name': name, 'in': 'path', 'required': True,
               'schema': _schema(_PATH_PARAMETERS[name])}
              for name in _path_names(operation.path)]
    query = operation.query
    required = ()
    if query.get('type') == 'object':
        required = query.get('required', ())
        query = query['properties']
    params += [{'name': name, 'in': 'query', 'required': name in required,
                'schema': _schema(schema)}
               for name, schema in query.items()]
    if not operation.public:
        params.append(_VERSION_HEADER)
    return params


def _path_names(path):
    return [part[1:-1] for part in path.split('/') if part.startswith('{')]


def _response(description, schema):
    response = {'description': description}
    if schema is not None:
        response['content'] = {'application/json': {
            'schema': _schema(schema)}}
    return response


def _operation(operation):
    doc = {'operationId': '%s %s' % (operation.method, operation.path),
           'summary': operation.summary,
           'parameters': _parameters(operation),
           'responses': {status: _response('Success.', schema)
                         for status, schema in
                         operation.responses.items()}}
    if operation.since is not None:
        doc['description'] = 'Microversion %s and later.' % (operation.since,)
    if operation.body is not None:
        doc['requestBody'] = {'required': True, 'content': {
            'application/json': {'schema': _schema(operation.body)}}}
    if not operation.public:
        errors = dict(ERRORS, **operation.errors)
        if operation.method != 'GET':
            errors.update(WRITE_ERRORS)
        doc['responses'].update({
            status: _response(why, version.fault)
            for status, why in sorted(errors.items())})
    else:
        doc['security'] = []
    return doc


@functools.lru_cache(maxsize=1)
def _document():
    paths = {}
    for operation in OPERATIONS:
        paths.setdefault(operation.path, {})[operation.method.lower()] = \
            _operation(operation)
    return {
        'openapi': VERSION,
        'info': {'title': 'OpenStack Cyborg API',
                 'version': str(microversion.MAX_VERSION),
                 'description': __doc__.split('\n\n', 1)[1]},
        'paths': paths,
        'components': {'securitySchemes': {'token': {
            'type': 'apiKey', 'in': 'header', 'name': 'X-Auth-Token',
            'description': 'A Keystone token.'}}},
        'security': [{'token': []}],
    }


def document(server_url):
    """The OpenAPI document, for the API served at ``server_url``."""
    doc = copy.deepcopy(_document())
    doc['servers'] = [{'url': server_url}]
    return doc
