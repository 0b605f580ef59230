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
"""Errors os-acc raises to its caller."""


class OsAccError(Exception):
    """Base of os-acc's errors."""


class CyborgAgentUnavailable(OsAccError):
    """Cyborg cannot be reached, so no accelerator can be attached."""


class DeviceProfileNotFound(OsAccError):
    """The flavor names a device profile Cyborg does not know."""


class AcceleratorBindFailed(OsAccError):
    """Cyborg could not bind some of the instance's accelerators.

    The instance's accelerator requests are deleted before this is raised.
    """


class AcceleratorBindTimeout(AcceleratorBindFailed):
    """Binding did not end within the time the caller allowed."""
