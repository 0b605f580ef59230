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
``GET /v2/openapi.json`` serves it without a token. It describes the
latest microversion (``info.version``), which the optional
``OpenStack-API-Version`` header asks for; an operation, a parameter or a
field that a microversion after 2.0 added says which one, and a field
whose format changed describes both. A request without the header, or
one whose header names no ``accelerator`` version, is served at 2.0 (the
API-SIG microversion guideline), which the api-ref describes.
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
    '415': 'The Content-Type of the request is not application/json.',
}

#: The errors of any call, public ones too: a Content-Type that is no
#: media type (400) or names no JSON body (415).
CONTENT_TYPE_ERRORS = {
    '400': 'The request is malformed: its Content-Type is no media type.',
    '415': ERRORS['415'],
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
    :param links: {status: {name: (operationId, {parameter: runtime
        expression})}}: where an answer leads (OpenAPI links).
    """

    def __init__(self, method, path, summary, responses, query=None,
                 body=None, since=None, errors=None, public=False,
                 links=None):
        self.method = method
        self.path = path
        self.summary = summary
        self.responses = responses
        self.query = query or {}
        self.body = body
        self.since = since
        self.errors = dict(errors or {})
        self.public = public
        self.links = links or {}


def _list_query(schema):
    """The query parameters of a list at the newest microversion."""
    return parameter_types.list_query(
        microversion.MAX_VERSION, schema.list_query, schema.SORT_KEYS,
        getattr(schema, 'list_query_since', None))['properties']


def _list(collection, schema, response, key=None, errors=None):
    """``GET`` of a collection, listed under ``key`` (its name)."""
    return Operation('GET', '/v2/' + collection, 'List %s.' % collection,
                     {'200': parameter_types.collection(key or collection,
                                                        response)},
                     query=_list_query(schema), errors=errors)


_DP = '/v2/device_profiles/{uuid_or_name}'
_ARQ = '/v2/accelerator_requests'
_PROGRAM = 'Program an FPGA deployable with a bitstream image.'


def _to(path, parameter, expression, *methods):
    """Links from an answer to the operations of ``path`` on one object."""
    return {'%s%s' % (method.title(), ''.join(
        word.title() for word in path.split('/')[2].split('_'))): (
        '%s %s' % (method, path), {parameter: expression})
        for method in methods}


OPERATIONS = (
    Operation('GET', '/', 'List the versions of the API.',
              {'200': version.list_response}, public=True),
    Operation('GET', '/v2', 'Show version 2 and its microversions.',
              {'200': version.response}, public=True),
    Operation('GET', PATH, 'This document.', {'200': {'type': 'object'}},
              public=True),
    _list('device_profiles', device_profile, device_profile.response),
    Operation('POST', '/v2/device_profiles', 'Create a device profile.',
              {'201': device_profile.response},
              body=device_profile.create_document,
              links={'201': _to(_DP, 'uuid_or_name', '$response.body#/uuid',
                                'GET', 'DELETE')}),
    Operation('DELETE', '/v2/device_profiles',
              'Delete the device profiles named (all or none).',
              {'204': None}, query=device_profile.delete_query),
    Operation('GET', _DP, 'Show a device profile (by name from 2.2).',
              {'200': device_profile.show_response}),
    Operation('PATCH', _DP, 'Change a device profile\'s description or '
              'groups.', {'200': device_profile.response},
              body=device_profile.patch_document,
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
              'profile.', {'201': arq.create_response}, body=arq.create,
              links={'201': _to(_ARQ + '/{uuid}', 'uuid',
                                '$response.body#/arqs/0/uuid',
                                'GET', 'DELETE')}),
    Operation('PATCH', _ARQ, 'Bind or unbind accelerator requests.',
              {'202': None}, body=arq.patch_document, errors=HOST_ERRORS),
    Operation('DELETE', _ARQ, 'Delete accelerator requests, by uuid or '
              'by instance.', {'204': None}, query=arq.delete_query,
              errors=HOST_ERRORS),
    Operation('GET', _ARQ + '/{uuid}', 'Show an accelerator request.',
              {'200': arq.response}),
    Operation('PATCH', _ARQ + '/{uuid}', 'Bind or unbind an accelerator '
              'request.', {'202': None}, body=arq.operations_document,
              errors=HOST_ERRORS),
    Operation('DELETE', _ARQ + '/{uuid}', 'Delete an accelerator '
              'request.', {'204': None}, errors=HOST_ERRORS),
    _list('devices', device, device.response),
    Operation('GET', '/v2/devices/{uuid}', 'Show a device.',
              {'200': device.response}),
    Operation('POST', '/v2/devices/{uuid}/enable', 'Enable a device.',
              {'204': None}),
    Operation('POST', '/v2/devices/{uuid}/disable', 'Put a device in '
              'maintenance.', {'204': None}),
    Operation('POST', '/v2/devices/{uuid}/release', 'End a device\'s '
              'health quarantine.', {'204': None},
              errors=dict(HOST_ERRORS, **{
                  '423': 'A conductor is reconciling the device\'s host '
                         'just now; try again in a moment.'}),
              since=microversion.DEVICE_HEALTH),
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
              {'201': attribute.response}, body=attribute.create,
              links={'201': _to('/v2/attributes/{uuid}', 'uuid',
                                '$response.body#/uuid', 'GET', 'DELETE')}),
    Operation('GET', '/v2/attributes/{uuid}', 'Show an attribute.',
              {'200': attribute.response}),
    Operation('DELETE', '/v2/attributes/{uuid}', 'Delete an attribute.',
              {'204': None}),
)


#: Schemas the document holds once, under components, and refers to.
COMPONENTS = {'DeviceProfileGroup': device_profile.group_document}


def _schema(schema, named=True):
    """A JSON Schema as OpenAPI 3.1 takes it; error hints describe.

    A schema of :data:`COMPONENTS` becomes a reference to it, unless
    ``named`` is false (the component itself).
    """
    if named:
        for name, component in COMPONENTS.items():
            if schema is component:
                return {'$ref': '#/components/schemas/' + name}
    if isinstance(schema, dict):
        return {('description' if key == 'description_for_errors' else key):
                _schema(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_schema(value) for value in schema]
    return schema


_PATH_PARAMETERS = {
    'uuid': parameter_types.uuid,
    'again': parameter_types.uuid,
    # A comma-separated list (DELETE takes several) of no empty entry.
    'uuid_or_name': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                     'pattern': '^[^,]+(,[^,]+)*$'},
}

#: A microversion the service serves, or ``latest``.
_SERVED = '(?:%s|%s)' % ('|'.join(
    version.replace('.', '\\.') for version, _note in microversion.VERSIONS),
    microversion.LATEST)

#: What asks for a microversion the service serves: an ``accelerator``
#: entry, last in the list. Entries of other services may come first; the
#: service ignores them.
VERSION_PATTERN = (
    '^(?:[a-z][a-z0-9-]* (?:[0-9]+\\.[0-9]+|latest), ?)*%s %s$' % (
        microversion.SERVICE_TYPE, _SERVED))

#: The microversion a request without the header is served at.
DEFAULT_VERSION = '%s %s' % (microversion.SERVICE_TYPE,
                             microversion.MIN_VERSION)

_VERSION_HEADER = {
    'name': microversion.HEADER, 'in': 'header', 'required': False,
    'description': (
        'The microversion, as the API-SIG guideline spells it: a '
        'comma-separated list of "<service type> <version>" entries, of '
        'which the accelerator one counts. Optional: a request without '
        'it, or whose header names no accelerator version, is served at '
        '%s (the default); one naming a version the service does not serve '
        'is answered 406. This document describes %s ("accelerator '
        'latest"); an operation, parameter or field a later microversion '
        'added says which one, and the api-ref describes each '
        'microversion.' % (microversion.MIN_VERSION,
                           microversion.MAX_VERSION)),
    'schema': {'type': 'string', 'pattern': VERSION_PATTERN,
               'default': DEFAULT_VERSION,
               'examples': ['%s %s' % (microversion.SERVICE_TYPE,
                                       microversion.LATEST)]},
}


def _parameters(operation):
    params = [{'name': name, 'in': 'path', 'required': True,
               'schema': _schema(_PATH_PARAMETERS[name])}
              for name in _path_names(operation.path)]
    query = operation.query
    if 'oneOf' in query:
        # Parameters that exclude each other: one object, each member
        # its own parameter on the wire (style form, exploded).
        params.append({'name': 'query', 'in': 'query', 'required': True,
                       'style': 'form', 'explode': True,
                       'schema': _schema(query)})
        query = {}
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


def _response(description, schema, links=None):
    response = {'description': description}
    if schema is not None:
        response['content'] = {'application/json': {
            'schema': _schema(schema)}}
    if links:
        response['links'] = {
            name: {'operationId': operation_id, 'parameters': parameters}
            for name, (operation_id, parameters) in links.items()}
    return response


def _operation(operation):
    doc = {'operationId': '%s %s' % (operation.method, operation.path),
           'summary': operation.summary,
           'parameters': _parameters(operation),
           'responses': {status: _response('Success.', schema,
                                           operation.links.get(status))
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
        doc['responses'].update({
            status: _response(why, version.fault)
            for status, why in sorted(CONTENT_TYPE_ERRORS.items())})
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
                 'description': __doc__.split('\n\n', 1)[1],
                 # The microversion described, for tools that read no prose.
                 'x-openstack-microversion': '%s %s' % (
                     microversion.SERVICE_TYPE, microversion.MAX_VERSION)},
        'paths': paths,
        'components': {
            'schemas': {name: _schema(component, named=False)
                        for name, component in COMPONENTS.items()},
            'securitySchemes': {'token': {
                'type': 'apiKey', 'in': 'header', 'name': 'X-Auth-Token',
                'description': 'A Keystone token.'}}},
        'security': [{'token': []}],
    }


def document(server_url, token=True):
    """The OpenAPI document, for the API served at ``server_url``.

    :param token: whether the API needs a token; one that takes none
        (``[api] auth_strategy = noauth``) says so, so that a client or a
        testing tool made from the document does not expect a refusal.
    """
    doc = copy.deepcopy(_document())
    doc['servers'] = [{'url': server_url}]
    if not token:
        doc['security'] = []
        doc['info']['description'] += (
            '\nThis deployment authenticates no one ([api] auth_strategy = '
            'noauth): no token is needed.\n')
    return doc
