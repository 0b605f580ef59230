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
"""Request validation with JSON Schema, for bodies and query strings.

Schemas live in :mod:`cyborg.api.schemas`, one module per resource. A
request that does not match is refused with 400 and a message that names
the offending field; nothing is changed.
"""

import json
import re

import jsonschema

from cyborg import exception
from cyborg.i18n import _


def _field(error):
    path = list(error.absolute_path)
    if error.validator == 'required':
        # The missing property is named in the message, not the path.
        path.append(error.message.split("'")[1])
    return '/'.join(str(p) for p in path) or None


def _reason(error):
    if error.validator == 'additionalProperties' and isinstance(
            error.instance, dict):
        known = set(error.schema.get('properties', {}))
        patterns = list(error.schema.get('patternProperties', {}))
        unknown = sorted(k for k in error.instance if k not in known and
                         not any(re.search(p, k) for p in patterns))
        return _('unknown field(s) %s') % ', '.join(unknown)
    return error.schema.get('description_for_errors') or error.message


def _best(errors):
    """The error that explains best what is wrong.

    Where a value may take one of several forms (anyOf), the form the
    caller evidently meant (same JSON type, fewest errors) explains it
    better than "not valid under any of the given schemas".
    """
    error = jsonschema.exceptions.best_match(errors)
    while (error is not None and error.validator in ('anyOf', 'oneOf') and
           error.context and
           'description_for_errors' not in error.schema):
        branches = {}
        for sub in error.context:
            branches.setdefault(sub.schema_path[0], []).append(sub)
        fitting = [errs for errs in branches.values()
                   if not any(e.validator == 'type' and not e.relative_path
                              for e in errs)]
        if not fitting:
            break
        error = jsonschema.exceptions.best_match(min(fitting, key=len))
    return error


def validate(schema, value, where):
    """Check ``value`` against ``schema``.

    :param where: what is validated, for the message.
    :raises InvalidParameterValue: it does not match.
    """
    validator = jsonschema.Draft202012Validator(schema)
    error = _best(validator.iter_errors(value))
    if error is None:
        return value
    field = _field(error)
    raise exception.InvalidParameterValue(
        name=('%s %s' % (where, field)) if field else where,
        reason=_reason(error))


#: How deep a request body may nest arrays and objects. No body the API
#: takes nests more than a few levels; a deeper one would exhaust the
#: decoder's or the validator's recursion (a 500) for nothing.
MAX_BODY_DEPTH = 32


def _depth(value):
    """How deep ``value`` nests lists and dicts, counted without recursion."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            value = list(value.values())
        elif not isinstance(value, list):
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_BODY_DEPTH:
            break
        pending.extend((item, depth + 1) for item in value)
    return deepest


def _too_deep():
    return exception.InvalidParameterValue(
        name='body', reason=_('arrays and objects nested more than %d '
                              'deep') % MAX_BODY_DEPTH)


def body(request, schema):
    """The request's JSON body, validated against ``schema``.

    :raises InvalidParameterValue: no body, not JSON, nested deeper than
        :data:`MAX_BODY_DEPTH`, or not matching the schema.
    """
    if not request.body:
        raise exception.InvalidParameterValue(
            name='body', reason=_('a JSON body is required'))
    try:
        value = json.loads(request.body)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as e:
        raise exception.InvalidParameterValue(
            name='body', reason=_('not valid JSON: %s') % e)
    if _depth(value) > MAX_BODY_DEPTH:
        raise _too_deep()
    return validate(schema, value, _('field'))


#: The query parameters of the filters that releases before ours took
#: on some lists: ``filters.field=<field>&filters.value=<value>``, one
#: pair per filter.
LEGACY_FILTER_FIELD = 'filters.field'
LEGACY_FILTER_VALUE = 'filters.value'

#: The fields those filters could name.
LEGACY_FILTER_FIELDS = ('parent_uuid', 'root_uuid', 'board', 'availability',
                        'interface_type', 'instance_uuid', 'limit', 'marker',
                        'sort_key', 'sort_dir', 'name')


def legacy_filters(request):
    """The ``filters.field``/``filters.value`` pairs as a {field: value}.

    :raises InvalidParameterValue: the pairs do not match up, or a field
        is not one of :data:`LEGACY_FILTER_FIELDS` or is given twice.
    """
    fields = request.GET.getall(LEGACY_FILTER_FIELD)
    values = request.GET.getall(LEGACY_FILTER_VALUE)
    if len(fields) != len(values):
        raise exception.InvalidParameterValue(
            name='filters', reason=_('give one filters.value for each '
                                     'filters.field'))
    filters = {}
    for field, value in zip(fields, values):
        if field not in LEGACY_FILTER_FIELDS:
            raise exception.InvalidParameterValue(
                name=LEGACY_FILTER_FIELD, reason=_(
                    '%(field)s is not one of %(known)s') % {
                        'field': field,
                        'known': ', '.join(LEGACY_FILTER_FIELDS)})
        if field in filters:
            raise exception.InvalidParameterValue(
                name=LEGACY_FILTER_FIELD,
                reason=_('%s given more than once') % field)
        filters[field] = value
    return filters


def query(request, schema, legacy=False):
    """The query string as a {name: string} dict, validated.

    :param legacy: leave out the parameters of :func:`legacy_filters`.
    :raises InvalidParameterValue: a parameter is given more than once or
        does not match the schema.
    """
    params = {}
    for name, value in request.GET.items():
        if legacy and name in (LEGACY_FILTER_FIELD, LEGACY_FILTER_VALUE):
            continue
        if name in params:
            raise exception.InvalidParameterValue(
                name=name, reason=_('given more than once'))
        params[name] = value
    return validate(schema, params, _('query parameter'))
