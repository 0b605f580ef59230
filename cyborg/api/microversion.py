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
"""API microversions: the one ordered list, and the header that picks one.

A client asks for a microversion with ``OpenStack-API-Version: accelerator
2.N`` (a bare ``2.N`` and ``latest`` are accepted too); without the header
it gets 2.0. Every change to the API after 2.0 adds a line to ``VERSIONS``,
a constant below it, a reno note and a line in the api-ref history.
"""

import re

from cyborg import exception
from cyborg.i18n import _

SERVICE_TYPE = 'accelerator'
HEADER = 'OpenStack-API-Version'
MIN_HEADER = 'OpenStack-API-Minimum-Version'
MAX_HEADER = 'OpenStack-API-Maximum-Version'
LATEST = 'latest'

#: Every microversion, oldest first, each with what it changed.
VERSIONS = (
    ('2.0', 'The base version.'),
    ('2.1', 'An administrator may set /project_id when binding an '
            'accelerator request.'),
    ('2.2', 'GET /v2/device_profiles/{name} shows a profile by name.'),
    ('2.3', 'Devices show their status: enabled or maintaining.'),
    ('2.4', 'limit, marker, sort_key and sort_dir page every list, which '
            'ends with a next link; accelerator request lists filter on '
            'state, hostname and device_rp_uuid.'),
    ('2.5', 'PATCH /v2/device_profiles/{uuid} changes a profile\'s '
            'description and groups; POST .../enable and .../disable; '
            'profiles show enabled.'),
    ('2.6', 'Deployables show attributes_list as an array, a device '
            'profile shown alone has ISO 8601 timestamps, accelerator '
            'requests show the attach handle they hold in any state.'),
    ('2.7', 'A list marker or an attribute\'s deployable_id that names '
            'no object is answered with 404, programming a deployable that '
            'cannot be programmed with 409 (all were 400); attribute lists '
            'filter on a deployable\'s UUID too.'),
    ('2.8', 'PATCH /v2/accelerator_requests/{uuid} takes the list of '
            'operations for that request alone, not a body keyed by '
            'uuid.'),
    ('2.9', 'Devices and deployables show health, health_reasons and '
            'quarantined; POST /v2/devices/{uuid}/release ends a '
            'quarantine.'),
)


class Version(tuple):
    """A microversion as a comparable (major, minor) pair."""

    def __new__(cls, major, minor):
        return super().__new__(cls, (major, minor))

    @classmethod
    def parse(cls, text):
        match = re.fullmatch(r'\s*(\d+)\.(\d+)\s*', text)
        if match is None:
            raise ValueError(text)
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self):
        return '%d.%d' % self


MIN_VERSION = Version.parse(VERSIONS[0][0])
MAX_VERSION = Version.parse(VERSIONS[-1][0])

# Named versions that the code tests against.
PROJECT_ID_IN_BIND = Version(2, 1)
PROFILE_BY_NAME = Version(2, 2)
DEVICE_STATUS = Version(2, 3)
PAGING = Version(2, 4)
PROFILE_LIFECYCLE = Version(2, 5)
OWN_FORMATS = Version(2, 6)
NAMED_OBJECTS = Version(2, 7)
PATCH_ONE = Version(2, 8)
DEVICE_HEALTH = Version(2, 9)


def _refuse(text):
    return exception.NotAcceptable(reason=_(
        'Version %(asked)s was asked for; this server supports accelerator '
        '%(min)s to %(max)s in the OpenStack-API-Version header.') % {
            'asked': text, 'min': MIN_VERSION, 'max': MAX_VERSION})


def from_header(value):
    """The microversion a request's ``OpenStack-API-Version`` asks for.

    ``value`` may hold several comma-separated services; only the
    ``accelerator`` one counts. Absent means 2.0.

    :raises NotAcceptable: unparsable, or outside what is supported.
    """
    if not value:
        return MIN_VERSION
    wanted = None
    for part in value.split(','):
        words = part.split()
        if len(words) == 2 and words[0].lower() == SERVICE_TYPE:
            wanted = words[1]
        elif len(words) == 1:
            wanted = words[0]
    if wanted is None:
        # Other services only: this request does not choose for us.
        return MIN_VERSION
    if wanted.lower() == LATEST:
        return MAX_VERSION
    try:
        version = Version.parse(wanted)
    except ValueError:
        raise _refuse(wanted)
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise _refuse(wanted)
    return version


def response_headers(version=None):
    """Headers every /v2 response carries; ``version`` when known."""
    headers = {MIN_HEADER: str(MIN_VERSION), MAX_HEADER: str(MAX_VERSION),
               'Vary': HEADER}
    if version is not None:
        headers[HEADER] = '%s %s' % (SERVICE_TYPE, version)
    return headers
