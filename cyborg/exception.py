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
"""Cyborg's domain exceptions.

One hierarchy for the whole service. Exceptions describe what went wrong in
the domain and know nothing about HTTP: the API edge maps each family to a
status code in one table (cyborg.api.errors). They are raised across RPC,
so each one keeps its formatted message in str().
"""

from cyborg.i18n import _


class CyborgException(Exception):
    """Base of every Cyborg error; msg_fmt is filled from kwargs."""

    msg_fmt = _("An unknown exception occurred.")

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if not message:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                # A caller passed the wrong keywords: keep the template
                # rather than hide the real error behind a formatting one.
                message = self.msg_fmt
        self.message = str(message)
        super().__init__(self.message)

    def __str__(self):
        return self.message


# --- families -------------------------------------------------------------

class Invalid(CyborgException):
    msg_fmt = _("Invalid input: %(reason)s")


class NotFound(CyborgException):
    msg_fmt = _("Resource could not be found.")


class Conflict(CyborgException):
    msg_fmt = _("Conflict: %(reason)s")


class Forbidden(CyborgException):
    msg_fmt = _("Forbidden: %(reason)s")


class Locked(CyborgException):
    msg_fmt = _("The resource is busy: %(reason)s")


class NotAcceptable(CyborgException):
    msg_fmt = _("Not acceptable: %(reason)s")


class ServiceUnavailable(CyborgException):
    msg_fmt = _("Service unavailable: %(reason)s")


class HostFailure(CyborgException):
    """The host, a driver or a vendor tool failed at its part of the job."""

    msg_fmt = _("The host failed: %(reason)s")


# --- invalid input --------------------------------------------------------

class InvalidParameterValue(Invalid):
    msg_fmt = _("Invalid value for %(name)s: %(reason)s")


class MissingReference(InvalidParameterValue):
    """A new row would refer to one that does not exist."""


class MarkerNotFound(InvalidParameterValue):
    """A list's marker names no object: the request's form is fine."""

    msg_fmt = _("Invalid value for marker: %(marker)s was not found")


class InvalidStateTransition(Invalid):
    msg_fmt = _("Unknown accelerator request state %(state)s.")


class InvalidAttachHandle(Invalid):
    msg_fmt = _("Attach handle %(uuid)s cannot be used: %(reason)s")


class BindRefused(Invalid):
    msg_fmt = _("Accelerator request %(uuid)s cannot be bound to resource "
                "provider %(rp)s: %(reason)s")


class InvalidDriverReport(Invalid):
    msg_fmt = _("Driver %(driver)s reported an invalid inventory: "
                "%(reason)s")


class BitstreamRejected(Invalid):
    msg_fmt = _("Bitstream %(image)s cannot be loaded on %(deployable)s: "
                "%(reason)s")


class NotProgrammable(Invalid):
    msg_fmt = _("Deployable %(deployable)s cannot be programmed: "
                "%(reason)s")


class MdevTypeNotEnabled(Invalid):
    msg_fmt = _("Mediated device type %(mdev_type)s is not enabled on this "
                "host (see [gpu_devices] enabled_vgpu_types).")


class DatabaseNotConvertible(Invalid):
    msg_fmt = _("The database of openstack-cyborg 17.0.0 cannot be "
                "converted: %(reason)s")


class ServerTLSInvalid(Invalid):
    msg_fmt = _("cyborg-api cannot serve HTTPS: %(reason)s")


class DatabaseSchemaRefused(Invalid):
    msg_fmt = _("%(reason)s")


# --- not found ------------------------------------------------------------

class DeviceNotFound(NotFound):
    msg_fmt = _("Device %(uuid)s could not be found.")


class DeployableNotFound(NotFound):
    msg_fmt = _("Deployable %(uuid)s could not be found.")


class AttributeNotFound(NotFound):
    msg_fmt = _("Attribute %(uuid)s could not be found.")


class ControlpathIDNotFound(NotFound):
    msg_fmt = _("Control path id %(uuid)s could not be found.")


class AttachHandleNotFound(NotFound):
    msg_fmt = _("Attach handle %(uuid)s could not be found.")


class DeviceProfileNotFound(NotFound):
    msg_fmt = _("Device profile %(name)s could not be found.")


class AcceleratorRequestNotFound(NotFound):
    msg_fmt = _("Accelerator request %(uuid)s could not be found.")


class DriverNotFound(NotFound):
    msg_fmt = _("Accelerator driver %(name)s is not installed: no entry "
                "point of that name in namespace %(namespace)s.")


class BitstreamNotFound(NotFound):
    msg_fmt = _("No active FPGA bitstream in Glance matches %(criteria)s.")


class ResourceProviderNotFound(NotFound):
    msg_fmt = _("Resource provider %(name)s could not be found in "
                "Placement.")


# --- conflicts ------------------------------------------------------------

class DuplicateEntry(Conflict):
    msg_fmt = _("A %(kind)s with %(field)s %(value)s already exists.")


class DeviceProfileInUse(Conflict):
    msg_fmt = _("Device profile %(name)s is used by %(count)d accelerator "
                "request(s); delete them first.")


class DeviceProfileDisabled(Conflict):
    msg_fmt = _("Device profile %(name)s is disabled.")


class TooManyAccelerators(Conflict):
    msg_fmt = _("Device profile %(name)s asks for %(count)d accelerators; "
                "one request makes at most %(limit)d ([api] "
                "max_accelerators_per_request).")


class AcceleratorRequestInvalidState(Conflict):
    msg_fmt = _("Accelerator request %(uuid)s is in state %(state)s; "
                "it must be one of %(allowed)s for this operation.")


class AttachHandleUnavailable(Conflict):
    msg_fmt = _("No free attach handle on deployable %(deployable)s.")


class ObjectInUse(Conflict):
    msg_fmt = _("%(kind)s %(uuid)s is in use: %(reason)s")


class DeployableProgramming(Conflict):
    msg_fmt = _("Deployable %(name)s (%(uuid)s) is being programmed since "
                "%(since)s: none of its accelerators can be bound or "
                "programmed until its host's agent is done.")


class BitstreamAmbiguous(Conflict):
    msg_fmt = _("%(count)d bitstreams match %(criteria)s: %(candidates)s; "
                "ask for one of them by id.")


class MdevFailed(Conflict):
    msg_fmt = _("Cannot %(action)s mediated device %(uuid)s: %(reason)s")


# --- failures of the host or its tools -----------------------------------

class DriverLoadFailed(HostFailure):
    msg_fmt = _("Accelerator driver %(name)s failed to load: %(reason)s")


class ProgrammingFailed(HostFailure):
    msg_fmt = _("Programming %(deployable)s failed: %(reason)s")


# --- locked ---------------------------------------------------------------

class AcceleratorRequestsUnresolved(Locked):
    msg_fmt = _("Accelerator requests of instance %(instance)s are not "
                "resolved yet.")


class HostLeaseHeld(Locked):
    msg_fmt = _("Host %(host)s is being reconciled by %(owner)s.")


# --- forbidden ------------------------------------------------------------

class PolicyNotAuthorized(Forbidden):
    msg_fmt = _("Policy does not allow %(action)s to be performed.")


class ServiceTokenRequired(Forbidden):
    msg_fmt = _("%(action)s requires a service token.")


class ReportForOtherHost(Forbidden):
    """An agent named a host other than the one its topic belongs to."""
    msg_fmt = _("The agent of host %(sender)s may not %(action)s for host "
                "%(host)s.")


class SharedTopicClosed(Forbidden):
    """A report call came on the shared topic after the upgrade ended."""
    msg_fmt = _("%(action)s is not served on the shared topic "
                "cyborg-conductor ([conductor] serve_agents_on_shared_topic "
                "is False): upgrade the agent of host %(host)s, which sends "
                "on its own topic.")


# --- hosts and their inventory (conductor/inventory.py) --------------------

class HostNotFound(NotFound):
    msg_fmt = _("Host %(host)s could not be found.")


class InvalidHostReport(Invalid):
    msg_fmt = _("Host %(host)s reported an invalid inventory: %(reason)s")


class InventoryChanged(Conflict):
    msg_fmt = _("The inventory of host %(host)s changed while a report was "
                "applied (%(reason)s); the next report applies it again.")


class HostNameConflict(Conflict):
    msg_fmt = _("Host %(host)s reports device %(address)s, which is "
                "recorded under host name %(other)s for the same compute "
                "node; the report is refused so that the device is not "
                "recorded twice. Set [agent] resource_provider_name to "
                "%(other)s on that host and restart its cyborg-agent.")


# --- ARQ binding (conductor bind workflow) --------------------------------

class BindFailed(Conflict):
    msg_fmt = _("Binding accelerator request %(uuid)s failed: %(reason)s")


class UnbindFailed(HostFailure):
    msg_fmt = _("Releasing accelerator request %(uuid)s failed: "
                "%(reason)s; unbind it again to retry.")


# --- Placement (conductor's Placement client) -----------------------------

class PlacementUnavailable(ServiceUnavailable):
    msg_fmt = _("Placement cannot be reached: %(reason)s")


class PlacementRequestFailed(ServiceUnavailable):
    msg_fmt = _("Placement refused %(method)s %(url)s with status "
                "%(status)s: %(reason)s")


class ResourceProviderExists(Conflict):
    msg_fmt = _("Placement already has a resource provider named %(name)s "
                "or with uuid %(uuid)s: %(reason)s")


class ResourceProviderGenerationConflict(Conflict):
    msg_fmt = _("Resource provider %(uuid)s kept changing while it was "
                "updated; gave up after %(retries)d retries.")


class ConsumerGenerationConflict(Conflict):
    msg_fmt = _("The allocations of consumer %(uuid)s kept changing while "
                "they were updated; gave up after %(retries)d retries.")


# --- Nova (the conductor's and cyborg-manage's Nova client) ----------------

class NovaUnavailable(ServiceUnavailable):
    msg_fmt = _("Nova could not answer: %(reason)s")
