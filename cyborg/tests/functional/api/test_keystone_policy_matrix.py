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
"""Every policy rule against every persona, with a real Keystone's tokens.

The API behind keystonemiddleware of
:class:`cyborg.tests.functional.api.test_keystone.KeystoneTestCase`: with
the new defaults, and with 17.0.0's legacy decisions.
"""

from cyborg import policies
from cyborg.tests.functional.api import test_keystone

#: The callers of the policy matrix; ``system`` is the administrator with
#: a system-scoped token.
MATRIX_PERSONAS = ('admin', 'manager', 'member', 'reader', 'member-b',
                   'service', 'other', 'system')
V2_5 = {'OpenStack-API-Version': 'accelerator 2.5'}
V2_9 = {'OpenStack-API-Version': 'accelerator 2.9'}


class PolicyMatrixCase(test_keystone.KeystoneTestCase):
    """Policy rules against every persona, with real tokens.

    The controllers authorise before they validate, so a write that
    policy allows is answered ``400`` for the bad query or body it is
    sent with, and changes nothing. Reads and the writes of accelerator
    requests use real objects: those of ``project-a``, which the other
    projects cannot find (``404``).
    """

    def api_fixture(self):
        # /metrics is served only while enabled.
        self.conf.config(enabled=True, group='metrics')
        return super().api_fixture()

    def _requests(self):
        """Per rule: the request, or a callable that makes it per persona."""
        def admin_get(path):
            [item] = self.call('GET', path, 'admin').json()[
                path.strip('/')][:1]
            return item

        profile = admin_get('/device_profiles')['uuid']
        device = admin_get('/devices')['uuid']
        deployable = admin_get('/deployables')['uuid']
        attribute = admin_get('/attributes')['uuid']
        arq = self.create_arq()
        arqs = 'accelerator_requests'

        def arq_update(persona):
            uuid = self.create_arq()
            return {'method': 'PATCH', 'path': '/%s/%s' % (arqs, uuid),
                    'service': 'service', 'json': {uuid: self.unbind_patch()}}

        def arq_delete(persona):
            return {'method': 'DELETE',
                    'path': '/%s/%s' % (arqs, self.create_arq())}

        def req(method, path, **kwargs):
            return dict(kwargs, method=method, path=path)

        dp = '/device_profiles/' + test_keystone.PROFILE
        return {
            'cyborg:device:get_all': req('GET', '/devices'),
            'cyborg:device:get_one': req('GET', '/devices/' + device),
            'cyborg:device:enable': req(
                'POST', '/devices/%s/enable?bad=1' % device),
            'cyborg:device:disable': req(
                'POST', '/devices/%s/disable?bad=1' % device),
            'cyborg:device:release': req(
                'POST', '/devices/%s/release?bad=1' % device,
                headers=V2_9),
            'cyborg:deployable:get_all': req('GET', '/deployables'),
            'cyborg:deployable:get_one': req(
                'GET', '/deployables/' + deployable),
            'cyborg:deployable:program': req(
                'PATCH', '/deployables/%s/program' % deployable, json={}),
            'cyborg:attribute:get_all': req('GET', '/attributes'),
            'cyborg:attribute:get_one': req(
                'GET', '/attributes/' + attribute),
            'cyborg:attribute:create': req('POST', '/attributes', json={}),
            'cyborg:attribute:delete': req(
                'DELETE', '/attributes/%s?bad=1' % attribute),
            'cyborg:device_profile:get_all': req('GET', '/device_profiles'),
            'cyborg:device_profile:get_one': req(
                'GET', '/device_profiles/' + profile),
            'cyborg:device_profile:create': req(
                'POST', '/device_profiles', json={}),
            'cyborg:device_profile:delete': req('DELETE', dp + '?bad=1'),
            'cyborg:device_profile:update': req(
                'PATCH', dp, json={}, headers=V2_5),
            'cyborg:device_profile:enable': req(
                'POST', dp + '/enable?bad=1', headers=V2_5),
            'cyborg:device_profile:disable': req(
                'POST', dp + '/disable?bad=1', headers=V2_5),
            'cyborg:arq:get_all': req('GET', '/' + arqs),
            'cyborg:arq:get_one': req('GET', '/%s/%s' % (arqs, arq)),
            'cyborg:arq:create': req('POST', '/' + arqs, json={}),
            'cyborg:arq:update': arq_update,
            'cyborg:arq:delete': arq_delete,
            'cyborg:metrics:get': req(
                'GET', self.endpoint.rsplit('/v2', 1)[0] + '/metrics'),
        }

    def statuses(self, rules):
        """{rule: the status of each of MATRIX_PERSONAS}."""
        actual = {}
        for rule, request in sorted(self._requests().items()):
            if rule not in rules:
                continue
            statuses = []
            for persona in MATRIX_PERSONAS:
                kwargs = request(persona) if callable(request) else request
                if persona == 'system':
                    kwargs = dict(kwargs, persona='admin',
                                  system_scope='all')
                else:
                    kwargs = dict(kwargs, persona=persona)
                statuses.append(self.call(**kwargs).status_code)
            actual[rule] = tuple(statuses)
        return actual


class TestPolicyMatrix(PolicyMatrixCase):
    """Every rule, with ``enforce_new_defaults = True``."""

    def test_every_rule(self):
        admin_only = (400, 403, 403, 403, 403, 403, 403, 403)
        managers = (200, 200, 403, 403, 403, 403, 403, 403)
        readers = (200, 200, 200, 200, 200, 403, 403, 403)
        expected = {
            # persona: admin manager member reader member-b service other
            # system
            'cyborg:device:get_all': managers,
            'cyborg:device:get_one': managers,
            'cyborg:device:enable': admin_only,
            'cyborg:device:disable': admin_only,
            'cyborg:device:release': admin_only,
            'cyborg:deployable:get_all': managers,
            'cyborg:deployable:get_one': managers,
            'cyborg:deployable:program': admin_only,
            'cyborg:attribute:get_all': managers,
            'cyborg:attribute:get_one': managers,
            'cyborg:attribute:create': admin_only,
            'cyborg:attribute:delete': admin_only,
            'cyborg:device_profile:get_all': readers,
            'cyborg:device_profile:get_one': readers,
            'cyborg:device_profile:create': admin_only,
            'cyborg:device_profile:delete': admin_only,
            'cyborg:device_profile:update': admin_only,
            'cyborg:device_profile:enable': admin_only,
            'cyborg:device_profile:disable': admin_only,
            'cyborg:arq:get_all': readers,
            'cyborg:arq:get_one': (200, 200, 200, 200, 404, 404, 403, 403),
            'cyborg:arq:create': (400, 400, 400, 403, 400, 400, 403, 403),
            'cyborg:arq:update': (202, 202, 202, 403, 404, 404, 403, 403),
            'cyborg:arq:delete': (204, 204, 204, 403, 404, 404, 403, 403),
            'cyborg:metrics:get': (200, 403, 403, 403, 403, 403, 403, 403),
        }
        self.assertEqual(
            sorted(rule.name for rule in policies.list_rules()
                   if rule.name.startswith('cyborg:')),
            sorted(expected))
        self.assertEqual(expected, self.statuses(expected))


class TestLegacyPolicyMatrix(PolicyMatrixCase):
    """With the default configuration the decisions are 17.0.0's.

    The rows where they differ from the new defaults (the whole matrix,
    against 17.0.0 itself, is ``cyborg.tests.unit.test_policy_cyborg17``):
    17.0.0's ``project_*_or_*`` rules fall back to ``admin_or_owner``, so
    anyone with a token of a project (``other`` has only a custom role)
    reads the hardware and the profiles, and reads and requests the
    accelerators of the project.
    """

    ENFORCE_NEW_DEFAULTS = None

    def test_17_decisions(self):
        anyone = (200, 200, 200, 200, 200, 200, 200, 403)
        expected = {
            # persona: admin manager member reader member-b service other
            # system
            'cyborg:device:get_all': anyone,
            'cyborg:deployable:get_one': anyone,
            'cyborg:attribute:get_all': anyone,
            'cyborg:device_profile:get_one': anyone,
            'cyborg:arq:get_all': anyone,
            'cyborg:arq:get_one': (200, 200, 200, 200, 404, 404, 200, 403),
            'cyborg:arq:create': (400, 400, 400, 400, 400, 400, 400, 403),
            # Administrators only, as in 17.0.0.
            'cyborg:device:enable': (400, 403, 403, 403, 403, 403, 403, 403),
        }
        self.assertEqual(expected, self.statuses(expected))
