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
"""Tells Nova that accelerator requests are bound, and asks it of servers.

Nova waits for one ``accelerator-request-bound`` event per ARQ before it
reads the bound ARQs and spawns the instance. This client makes one call
per batch of events and says which of them are done with; the conductor
keeps the others and sends them again (:mod:`cyborg.conductor.nova_events`).
An event Nova refuses because the instance is gone or not on a host yet
(404 or 422 per event) is done with: no instance waits for it.
``cyborg-manage audit`` asks whether a server exists
(:meth:`NovaClient.server_exists`), and first whether Nova shows it every
project's servers (:meth:`NovaClient.sees_all_projects`).
"""

from keystoneauth1 import exceptions as ks_exc
from oslo_log import log

from cyborg.clients import keystone
from cyborg import exception

LOG = log.getLogger(__name__)

#: The compute API microversion that added ``accelerator-request-bound``.
MICROVERSION = '2.82'
EVENT_NAME = 'accelerator-request-bound'
PATH = '/os-server-external-events'


def arq_event(instance_uuid, arq_uuid, status):
    """One ``accelerator-request-bound`` event for an ARQ.

    :param status: ``completed`` (bound) or ``failed``.
    """
    return {'name': EVENT_NAME, 'server_uuid': instance_uuid,
            'tag': arq_uuid, 'status': status}


class NovaClient:
    """Nova's external events and servers APIs, reached through ``[nova]``."""

    def __init__(self, conf):
        self._conf = conf

    def _api(self):
        # keystone.get_adapter keeps one adapter per process and options.
        return keystone.get_adapter(
            self._conf, 'nova', default_microversion=MICROVERSION,
            raise_exc=False)

    def send_arq_events(self, context, events):
        """Send ``events`` in one call.

        :returns: for each event, whether it is done with: taken by Nova,
            or refused for an instance that is gone or not on a host. The
            others (Nova unreachable, failing or refusing the call) are
            worth sending again.
        """
        try:
            response = self._api().post(
                PATH, json={'events': events},
                global_request_id=context.global_id)
        except ks_exc.ConnectionError as e:
            problem = str(e)
        except ks_exc.ClientException as e:
            # Misconfigured auth or catalog: said loudly, tried again later.
            LOG.error('Cannot send %(count)d accelerator request events '
                      'to Nova: %(err)s', {'count': len(events), 'err': e})
            return [False] * len(events)
        else:
            if response.status_code in (200, 207, 404):
                return self._answered(events, response)
            problem = 'HTTP %d %s' % (response.status_code,
                                      response.text[:200])
        LOG.warning('Nova did not take %(count)d accelerator request '
                    'events, to be sent again: %(problem)s',
                    {'count': len(events), 'problem': problem})
        return [False] * len(events)

    def server_exists(self, context, server_uuid):
        """Whether Nova knows the server (in any state but deleted).

        Only Nova's own 404 says that a server is gone: a soft-deleted
        server, which may still be restored, exists.

        :raises NovaUnavailable: Nova could not be reached or did not
            answer 200 or 404; nothing can be said of the server.
        """
        try:
            response = self._api().get(
                '/servers/%s' % server_uuid,
                global_request_id=context.global_id)
        except ks_exc.ClientException as e:
            raise exception.NovaUnavailable(reason=str(e))
        if response.status_code == 200:
            return True
        if response.status_code == 404:
            return False
        raise exception.NovaUnavailable(reason='GET /servers/%s: HTTP %d %s'
                                        % (server_uuid, response.status_code,
                                           response.text[:200]))

    def sees_all_projects(self, context):
        """Whether Nova shows ``[nova]``'s user the servers of every project.

        Nova answers ``GET /servers/<uuid>`` 404 both for a server that is
        gone and for one of another project that the caller may not see:
        a user with only the ``service`` role, as devstack and the install
        guide make, sees none. Listing the servers of all projects
        (``all_tenants``) is admin-only by default
        (``os_compute_api:servers:index:get_all_tenants``); Nova answers
        403 to a caller that may not.

        :returns: True when Nova lists every project's servers (200),
            False when it refuses to (403).
        :raises NovaUnavailable: Nova could not be reached or answered
            anything else; nothing can be said.
        """
        try:
            response = self._api().get(
                '/servers', params={'all_tenants': '1', 'limit': '1'},
                global_request_id=context.global_id)
        except ks_exc.ClientException as e:
            raise exception.NovaUnavailable(reason=str(e))
        if response.status_code in (200, 403):
            return response.status_code == 200
        raise exception.NovaUnavailable(
            reason='GET /servers?all_tenants=1: HTTP %d %s' % (
                response.status_code, response.text[:200]))

    @staticmethod
    def _answered(events, response):
        """Per event, whether Nova's answer ends it."""
        try:
            answered = response.json().get('events', [])
        except ValueError:
            answered = []
        if response.status_code == 404 and not answered:
            LOG.info('Nova knows none of the instances %s on a host',
                     sorted({e['server_uuid'] for e in events}))
            return [True] * len(events)
        done = []
        # Nova answers the events in the order they were sent.
        for event, answer in zip(events, answered):
            code = answer.get('code', response.status_code)
            if code not in (200, 404, 422):
                done.append(False)
                continue
            if code != 200:
                # A build that was rescheduled or deleted: the instance
                # does not wait for this event.
                LOG.info('Nova did not take event %(name)s for ARQ %(tag)s '
                         'of instance %(server)s: code %(code)s',
                         {'name': event['name'], 'tag': event['tag'],
                          'server': event['server_uuid'], 'code': code})
            done.append(True)
        return done + [False] * (len(events) - len(done))
