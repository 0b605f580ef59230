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
"""Base classes of Cyborg's versioned objects and their RPC serializer.

What every process that speaks RPC needs, the agent included: nothing
here reads the database (the stored objects' base classes are in
:mod:`cyborg.objects.stored`), so the agent's RPC client loads no
SQLAlchemy.
"""

from oslo_versionedobjects import base as ovo_base


class CyborgObjectRegistry(ovo_base.VersionedObjectRegistry):
    pass


class CyborgObject(ovo_base.VersionedObject):
    """Base of every Cyborg object; sets the serialisation namespaces."""

    OBJ_SERIAL_NAMESPACE = 'cyborg_object'
    OBJ_PROJECT_NAMESPACE = 'cyborg'


class CyborgObjectSerializer(ovo_base.VersionedObjectSerializer):
    OBJ_BASE_CLASS = CyborgObject
