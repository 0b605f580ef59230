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
"""Tells Nova that accelerator requests are bound, by external event.

Nova waits for one ``accelerator-request-bound`` event per ARQ before it
reads the bound ARQs and spawns the instance. An event Nova refuses
because the instance is not on a host yet (422 per event, 404 or 207 for
the whole call) is expected while an instance is still being scheduled,
so it is logged at info; an unreachable Nova is retried.
"""

import time

from keystoneauth1 import exceptions as ks_exc
from oslo_log import log

from cyborg.clients import keystone

LOG = log.getLogger(__name__)

#: The compute API microversion that added ``accelerator-request-bound``.
MICROVERSION = '2.82'
EVENT_NAME = 'accelerator-request-bound'
PATH = '/os-server-external-events'


def arq_event(instance_uuid, arq_uuid, bound):
    """One ``accelerator-request-bound`` event for an ARQ."""
    return {'name': EVENT_NAME, 'server_uuid': instance_uuid,
            'tag': arq_uuid, 'status': 'completed' if bound else 'failed'}


class NovaClient:
    """The external events API of Nova, reached through ``[nova]``.

    :param retry_delay: seconds before the first retry; each later retry
        waits twice as long as the one before, up to ``max_delay``.
    """

    def __init__(self, conf, retry_delay=1.0, max_delay=30.0):
        self._conf = conf
        self._retry_delay = retry_delay
        self._max_delay = max_delay

    def _api(self):
        # keystone.get_adapter keeps one adapter per process and options.
        return keystone.get_adapter(
            self._conf, 'nova', default_microversion=MICROVERSION,
            raise_exc=False)

    def send_arq_events(self, context, events):
        """Send ``events`` in one call, retrying an unreachable Nova.

        Connection errors and 5xx answers are retried up to ``[conductor]
        nova_event_max_retries`` times with exponential back-off.

        :returns: True when Nova answered (events for instances not on a
            host yet included), False when it could not be told.
        """
        if not events:
            return True
        retries = self._conf.conductor.nova_event_max_retries
        delay = self._retry_delay
        for attempt in range(retries + 1):
            if attempt:
                time.sleep(delay)
                delay = min(delay * 2, self._max_delay)
            try:
                response = self._api().post(
                    PATH, json={'events': events},
                    global_request_id=context.global_id)
            except ks_exc.ConnectionError as e:
                problem = str(e)
            except ks_exc.ClientException as e:
                # Misconfigured auth or catalog: retrying cannot help.
                LOG.error('Cannot send %(count)d accelerator request events '
                          'to Nova: %(err)s',
                          {'count': len(events), 'err': e})
                return False
            else:
                if response.status_code < 500:
                    return self._accepted(events, response)
                problem = 'HTTP %d' % response.status_code
            LOG.warning('Nova did not take %(count)d accelerator request '
                        'events (try %(try)d of %(tries)d): %(problem)s',
                        {'count': len(events), 'try': attempt + 1,
                         'tries': retries + 1, 'problem': problem})
        LOG.error('Gave up telling Nova about accelerator requests %s',
                  [e['tag'] for e in events])
        return False

    @staticmethod
    def _accepted(events, response):
        code = response.status_code
        if code not in (200, 207, 404):
            LOG.error('Nova refused accelerator request events %(tags)s: '
                      'HTTP %(code)d %(body)s',
                      {'tags': [e['tag'] for e in events], 'code': code,
                       'body': response.text[:200]})
            return False
        try:
            answered = response.json().get('events', [])
        except ValueError:
            answered = []
        for event in answered:
            if event.get('code', code) != 200:
                # Nova answers 422 per event (and 404 for the call) for
                # instances not on a host yet, such as a build that was
                # rescheduled; the instance does not wait for this event.
                LOG.info('Nova did not take event %(name)s for ARQ %(tag)s '
                         'of instance %(server)s: code %(code)s',
                         {'name': event.get('name'), 'tag': event.get('tag'),
                          'server': event.get('server_uuid'),
                          'code': event.get('code')})
        if code == 404 and not answered:
            LOG.info('Nova knows none of the instances %s on a host',
                     sorted({e['server_uuid'] for e in events}))
        return True
