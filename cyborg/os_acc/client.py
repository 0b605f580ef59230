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
"""The REST calls behind os-acc's plug and unplug."""

import time

from keystoneauth1 import exceptions as ks_exc

from cyborg.os_acc import exception

RESOLVED = ('Bound', 'BindFailed', 'Deleting')


def _bdf(info):
    return '%(domain)s:%(bus)s:%(device)s.%(function)s' % info


def attach_handle(arq):
    """What a hypervisor needs to attach one bound accelerator."""
    info = arq['attach_handle_info']
    handle = {'arq_uuid': arq['uuid'],
              'attach_handle_type': arq['attach_handle_type']}
    if arq['attach_handle_type'] == 'MDEV':
        handle.update(mdev_uuid=arq['attach_handle_uuid'],
                      mdev_type=info.get('asked_type'),
                      parent_pci_id=_bdf(info))
    else:
        handle['pci_id'] = _bdf(info)
        if info.get('physical_network'):
            handle['physical_network'] = info['physical_network']
    return handle


class Client:
    """os-acc over one keystoneauth1 Adapter for the accelerator service."""

    def __init__(self, adapter, poll_interval=0.05, max_poll_interval=1.0):
        self._api = adapter
        self._poll_interval = poll_interval
        self._max_poll_interval = max_poll_interval

    def _request(self, method, url, **kwargs):
        try:
            return self._api.request(url, method, raise_exc=False, **kwargs)
        except ks_exc.ConnectionError as e:
            raise exception.CyborgAgentUnavailable(str(e)) from e

    def _ok(self, response, *codes):
        if response.status_code not in codes:
            raise exception.OsAccError(
                'Cyborg answered %s %s: %s' % (
                    response.request.method, response.status_code,
                    response.text))
        return response

    def _wait(self, timeout, attempt):
        """Call ``attempt`` until it returns something, with back-off."""
        deadline = time.monotonic() + timeout
        interval = self._poll_interval
        while True:
            result = attempt()
            if result is not None:
                return result
            if time.monotonic() + interval > deadline:
                return None
            time.sleep(interval)
            interval = min(interval * 2, self._max_poll_interval)

    def wait_until_available(self, timeout):
        def answered():
            try:
                return self._request('GET', '/').status_code < 500 or None
            except exception.CyborgAgentUnavailable:
                return None
        if not self._wait(timeout, answered):
            raise exception.CyborgAgentUnavailable(
                'Cyborg did not answer within %s seconds' % timeout)

    def plug(self, instance_info, selected_rp, flavor_extra_specs,
             timeout=300):
        """Create, bind and wait for the instance's accelerators.

        :param instance_info: {'uuid', 'name', 'project_id', ...}.
        :param selected_rp: {'hostname', 'uuid'} when every accelerator
            comes from one resource provider, or {'hostname', 'groups':
            {profile group index: rp uuid}}.
        :param flavor_extra_specs: the flavor's extra specs; the profile
            is ``accel:device_profile``.
        :returns: one attach handle (see :func:`attach_handle`) per
            accelerator; [] when the flavor asks for none.
        """
        profile = flavor_extra_specs.get('accel:device_profile')
        if not profile:
            return []
        response = self._request('POST', '/accelerator_requests',
                                 json={'device_profile_name': profile})
        if response.status_code == 404:
            raise exception.DeviceProfileNotFound(profile)
        arqs = self._ok(response, 201).json()['arqs']
        instance = instance_info['uuid']
        refused = self._bind(arqs, selected_rp, instance)
        if refused is not None:
            self._ok(self._request('DELETE', '/accelerator_requests?arqs=%s'
                                   % ','.join(a['uuid'] for a in arqs)), 204)
            raise exception.AcceleratorBindFailed(
                'Cyborg refused to bind the accelerator requests of '
                'instance %s: %s' % (instance, refused))
        resolved = self._wait(timeout, lambda: self._resolved(instance))
        if resolved is None:
            self.unplug(instance_info)
            raise exception.AcceleratorBindTimeout(
                'accelerators of instance %s were not bound within %s '
                'seconds' % (instance, timeout))
        failed = [a['uuid'] for a in resolved if a['state'] != 'Bound']
        if failed:
            self.unplug(instance_info)
            raise exception.AcceleratorBindFailed(
                'Cyborg could not bind accelerator requests %s of instance '
                '%s' % (', '.join(failed), instance))
        return [attach_handle(arq) for arq in resolved]

    def _bind(self, arqs, selected_rp, instance):
        """Ask for the binds; Cyborg's reason when it refuses them (400)."""
        groups = selected_rp.get('groups') or {}
        patch = {}
        for arq in arqs:
            group = arq['device_profile_group_id']
            rp = groups.get(group, groups.get(str(group),
                                              selected_rp.get('uuid')))
            patch[arq['uuid']] = [
                {'op': 'add', 'path': '/hostname',
                 'value': selected_rp['hostname']},
                {'op': 'add', 'path': '/device_rp_uuid', 'value': rp},
                {'op': 'add', 'path': '/instance_uuid', 'value': instance}]
        response = self._request('PATCH', '/accelerator_requests',
                                 json=patch)
        if response.status_code == 400:
            return response.text
        self._ok(response, 202)
        return None

    def _resolved(self, instance):
        response = self._request(
            'GET', '/accelerator_requests?instance=%s&bind_state=resolved'
            % instance)
        if response.status_code == 423:
            return None
        arqs = self._ok(response, 200).json()['arqs']
        return arqs if all(a['state'] in RESOLVED for a in arqs) else None

    def unplug(self, instance_info):
        """Delete the instance's accelerator requests; returns how many."""
        instance = instance_info['uuid']
        arqs = self._ok(self._request(
            'GET', '/accelerator_requests?instance=%s' % instance),
            200).json()['arqs']
        self._ok(self._request(
            'DELETE', '/accelerator_requests?instance=%s' % instance), 204)
        return len(arqs)
