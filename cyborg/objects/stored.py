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
"""Base classes of the objects stored in the database.

Objects are data plus persistence: they read and write the database through
:mod:`cyborg.db` and never make RPC or HTTP calls.
"""

import datetime
import functools

from oslo_versionedobjects import base as ovo_base

from cyborg.db import api as db_api
from cyborg.objects import base
from cyborg.objects import fields


#: Field types whose values read from the database need no coercion.
_AS_STORED = frozenset((fields.BooleanField, fields.IntegerField,
                        fields.StringField, fields.UUIDField))
_UTC, _COERCE = 'utc', 'coerce'


def _string_dict(value):
    """Whether ``value`` is a dict of texts to texts or None."""
    return type(value) is dict and all(
        type(k) is str and (v is None or type(v) is str)
        for k, v in value.items())


def _string_dicts(value):
    """Whether ``value`` is a list of :func:`_string_dict` dicts."""
    return type(value) is list and all(map(_string_dict, value))


#: Field types read from JSON columns, and when a value read needs no
#: coercion: coercing would give an equal value (a device profile's
#: groups, an attach handle's info).
_AS_STORED_WHEN = {fields.DictOfNullableStringsField: _string_dict,
                   fields.ListOfDictOfNullableStringsField: _string_dicts}


def _naive_utc(value):
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value


class StoredObject(base.CyborgObject, ovo_base.VersionedObjectDictCompat):
    """An object read from a row of one table.

    Subclasses may override ``_from_db_object`` for fields that do not
    map one to one to columns.
    """

    fields = {
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    #: Fields computed from other tables; never written back.
    _derived_fields = ()

    @classmethod
    @functools.lru_cache(maxsize=None)
    def _column_fields(cls):
        """(name, how to load it) of the fields read from columns.

        A list of many rows is loaded field by field, so the values that
        the database already gives in the field's type skip
        oslo.versionedobjects' coercion (``None``); naive datetimes get
        their UTC zone as that coercion would give it (``_UTC``); JSON
        values skip it when a check says they are of the field's type
        already (the check, from ``_AS_STORED_WHEN``); the rest are set
        as attributes, coerced (``_COERCE``).
        """
        plan = []
        for name, field in cls.fields.items():
            if name in cls._derived_fields:
                continue
            if type(field) in _AS_STORED:
                how = None
            elif type(field) is fields.DateTimeField:
                how = _UTC
            else:
                how = _AS_STORED_WHEN.get(type(field), _COERCE)
            # oslo.versionedobjects' private name of a field's storage
            # (guarded by cyborg/tests/unit/api/test_library_internals.py);
            # gone once it can set a field without coercion publicly.
            plan.append((name, ovo_base._get_attrname(name), field.nullable,
                         how))
        return tuple(plan)

    @classmethod
    def _from_db_object(cls, context, db_row, obj=None):
        obj = obj or cls(context)
        for name, attrname, nullable, how in cls._column_fields():
            value = getattr(db_row, name)
            if (how is _COERCE or (value is None and not nullable) or
                    (callable(how) and not how(value))):
                setattr(obj, name, value)
                continue
            if how is _UTC and value is not None and value.tzinfo is None:
                value = value.replace(tzinfo=datetime.timezone.utc)
            setattr(obj, attrname, value)
        obj._context = context
        obj.obj_reset_changes()
        return obj

    @classmethod
    def _from_db_objects(cls, context, db_rows):
        return [cls._from_db_object(context, row) for row in db_rows]


class PersistentObject(StoredObject):
    """An object stored in one table, found by its uuid.

    Subclasses name their table's noun in ``_noun`` (see
    :mod:`cyborg.db.api`).
    """

    _noun = None

    @classmethod
    def get_by_uuid(cls, context, uuid):
        return cls._from_db_object(context,
                                   db_api.get(context, cls._noun, uuid))

    @classmethod
    def get_by_id(cls, context, obj_id):
        return cls._from_db_object(
            context, db_api.get_by_id(context, cls._noun, obj_id))

    @classmethod
    def list(cls, context, filters=None, limit=None, marker=None,
             sort_key=None, sort_dir=None):
        """Objects matching exact-match ``filters``, paged in SQL."""
        rows = db_api.get_all(context, cls._noun, filters=filters,
                              limit=limit, marker=marker, sort_key=sort_key,
                              sort_dir=sort_dir)
        return cls._from_db_objects(context, rows)

    def _writable_changes(self):
        """The changed columns, datetimes naive in UTC as columns hold them.

        Not every database driver drops a time zone the way SQLite does.
        """
        return {k: _naive_utc(v) for k, v in self.obj_get_changes().items()
                if k not in self._derived_fields and k != 'id'}

    def create(self, context):
        row = db_api.create(context, self._noun, self._writable_changes())
        self._from_db_object(context, row, obj=self)

    def save(self, context):
        changes = self._writable_changes()
        if changes:
            row = db_api.update(context, self._noun, self.uuid, changes)
            self._from_db_object(context, row, obj=self)

    def destroy(self, context):
        db_api.delete(context, self._noun, self.uuid)
        self.obj_reset_changes()
