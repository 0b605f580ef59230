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
"""Resources as the API shows them: WSME types rendered to JSON.

Responses are described by WSME types (one per resource, in that
resource's controller module) and rendered to JSON in the order their
attributes are declared. Requests are validated with JSON Schema
(:mod:`cyborg.api.validation`), not by WSME.
"""

import datetime
import functools

from wsme import types as wtypes

from cyborg.api.controllers import links


#: Type of created_at and updated_at: ISO 8601 with a time zone.
Timestamp = datetime.datetime
StringDict = wtypes.DictType(wtypes.text, wtypes.text)
ListOfStringDicts = wtypes.ArrayType(StringDict)


def _same(value):
    return value


def _to_json(datatype):
    """A function turning a value of WSME ``datatype`` into JSON data.

    It gives what WSME's ``tojson`` gives for the types the resources
    declare, without its per-value dispatch: this runs for every field
    of every item of a list. None where the value is JSON data already:
    a text, a number, a boolean, or a list or dict of those (a device
    profile's groups), which is then shown as it is, not copied.
    """
    if isinstance(datatype, wtypes.ArrayType):
        item = _to_json(datatype.item_type)
        if item is None:
            return None
        return lambda value: (None if value is None
                              else [item(v) for v in value])
    if isinstance(datatype, wtypes.DictType):
        key, val = _to_json(datatype.key_type), _to_json(datatype.value_type)
        if key is None and val is None:
            return None
        key, val = key or _same, val or _same
        return lambda value: (None if value is None else
                              {key(k): val(v) for k, v in value.items()})
    if datatype is datetime.datetime:
        return lambda value: None if value is None else value.isoformat()
    if wtypes.iscomplex(datatype) or datatype not in (
            wtypes.text, str, int, bool):
        raise TypeError('no JSON rendering for %r' % (datatype,))
    return None  # already JSON data


class Resource(wtypes.Base):
    """A resource as the API shows it; subclasses declare the fields.

    Fields are rendered in the order a subclass declares them, ``links``
    among them. ``_collection`` is the URL segment of its collection;
    ``_bookmark`` adds an unversioned bookmark link; ``_since`` maps the
    fields added by a microversion to it. (WSME takes every public class
    attribute for a field.)
    """

    _collection = None
    _bookmark = False
    _since = {}

    @classmethod
    @functools.lru_cache(maxsize=None)
    def _fields(cls, version):
        """(name, to JSON or None) of the fields shown at ``version``."""
        return tuple((attr.key, None if attr.key == 'links'
                      else _to_json(attr.datatype))
                     for attr in wtypes.list_attributes(cls)
                     if version >= cls._since.get(attr.key, version))

    @classmethod
    def render(cls, obj, version, url=None, **extra):
        """The JSON-ready dict of ``obj`` at ``version``.

        ``extra`` gives, as JSON data, the fields that are not the
        object's own or that it shows otherwise; ``url`` is
        :func:`~cyborg.api.controllers.links.base_url`, when the caller
        has it already.
        """
        body = {}
        for name, to_json in cls._fields(version):
            if name == 'links':
                value = links.links(cls._collection, obj.uuid,
                                    cls._bookmark, url)
            elif name in extra:
                value = extra[name]
            else:
                value = getattr(obj, name)
                if to_json is not None:
                    value = to_json(value)
            body[name] = value
        return body
