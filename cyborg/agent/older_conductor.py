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
"""An agent upgraded before its conductors: say so, wait, carry on.

A rolling upgrade replaces the controllers first. An agent of this
release whose host was upgraded too early meets conductors of
openstack-cyborg 17.0.0 (or of an older release of this one): they
answer its calls with ``NoSuchMethod`` or ``UnsupportedVersion``. That is
neither a failure of the agent nor a reason to stop: the agent says, once
a minute (:class:`Notice`), what to upgrade, keeps trying, and carries on
as soon as a conductor of this release answers.
"""

import time

from oslo_log import log
import oslo_messaging as messaging

LOG = log.getLogger(__name__)

#: What a conductor that lacks a method or version answers, by class name.
_ANSWERS = ('NoSuchMethod', 'UnsupportedVersion')
#: Seconds between two notices.
INTERVAL = 60


def is_older(error):
    """Whether ``error`` says the conductor lacks the method or version.

    Across RabbitMQ it arrives as a ``RemoteError`` naming the class.
    """
    if isinstance(error, messaging.RemoteError):
        return error.exc_type in _ANSWERS
    return type(error).__name__ in _ANSWERS


class Notice:
    """Say that the conductors are older, at most once per :data:`INTERVAL`.

    :param clock: seconds that only grow (``time.monotonic``).
    """

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._last = None

    def older(self, method, error):
        """Log the notice for ``error``, an answer to ``method``, if due."""
        now = self._clock()
        if self._last is not None and now - self._last < INTERVAL:
            return
        self._last = now
        # The first line: a remote error carries the conductor's traceback.
        LOG.warning(
            'The conductor answered %(method)s with %(error)s: it is older '
            'than this cyborg-agent (openstack-cyborg 17.0.0, or an earlier '
            'release of this one). Upgrade cyborg-conductor on the '
            'controllers before the agents of compute hosts. This agent '
            'waits and carries on as soon as an upgraded conductor answers.',
            {'method': method,
             'error': (str(error).splitlines() or [''])[0]})

    def answered(self):
        """A conductor answered: a later refusal is told again at once."""
        self._last = None
