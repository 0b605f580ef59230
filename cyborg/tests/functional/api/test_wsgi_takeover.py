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
"""The entry points openstack-cyborg's deployments name, still served.

``cyborg.api.wsgi_app`` with the configuration file in ``sys.argv`` (as
uWSGI's ``pyargv`` puts it), ``cyborg.wsgi.api`` likewise, and
``cyborg.api.app:app_factory`` loaded by paste.deploy through the
``api-paste.ini`` of openstack-cyborg 17.0.0 (from its installed package
when ``CYBORG_CLIENT_VENVS`` has it) and of kolla-ansible, whose filters
run around the application.
"""

import glob
import json
import os
import subprocess
import sys

import fixtures
import sqlalchemy
import testtools

from cyborg.db import models

#: The pipeline of kolla-ansible's cyborg-api-paste.ini.j2.
KOLLA_PASTE = """
[pipeline:main]
pipeline = cors request_id authtoken api_v2

[app:api_v2]
paste.app_factory = cyborg.api.app:app_factory

[filter:authtoken]
acl_public_routes = /, /v2
paste.filter_factory = cyborg.api.middleware.auth_token:AuthTokenMiddleware.factory

[filter:osprofiler]
paste.filter_factory = cyborg.common.profiler:WsgiMiddleware.factory

[filter:request_id]
paste.filter_factory = oslo_middleware:RequestId.factory

[filter:cors]
paste.filter_factory = oslo_middleware.cors:filter_factory
oslo_config_project = cyborg
"""  # noqa: E501

#: What openstack-cyborg 17.0.0 installs as etc/cyborg/api-paste.ini:
#: kolla's pipeline with http_proxy_to_wsgi.
CYBORG17_PASTE = KOLLA_PASTE.replace(
    'pipeline = cors request_id', 'pipeline = cors http_proxy_to_wsgi '
    'request_id') + """
[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware.http_proxy_to_wsgi:HTTPProxyToWSGI.factory
"""  # noqa: E501

#: Prints, as JSON, the status and request ids of each request.
SERVE = """
import json, webob
def serve(app, auth=None):
    answers = []
    for path in ('/v2', '/v2/device_profiles'):
        headers = {'X-Auth-Token': auth} if auth else {}
        response = webob.Request.blank(path, headers=headers).get_response(
            app)
        answers.append([response.status_int, response.headers.getall(
            'X-OpenStack-Request-Id')])
    print(json.dumps(answers))
"""


def _installed_17_paste():
    venvs = os.environ.get('CYBORG_CLIENT_VENVS')
    found = glob.glob(os.path.join(
        venvs, 'openstack-cyborg-17.0.0', 'etc', 'cyborg',
        'api-paste.ini')) if venvs else []
    return found[0] if found else None


class TestTakeoverEntryPoints(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        self.conf = os.path.join(self.state, 'cyborg.conf')
        self.write_conf('noauth')
        engine = sqlalchemy.create_engine('sqlite:///%s/c.sqlite' %
                                          self.state)
        models.BASE.metadata.create_all(engine)
        engine.dispose()

    def write_conf(self, auth_strategy):
        with open(self.conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\ntransport_url = fake://\n'
                    '[database]\nconnection = sqlite:///%s/c.sqlite\n'
                    '[api]\nauth_strategy = %s\n'
                    '[keystone_authtoken]\nwww_authenticate_uri = '
                    'http://keystone.test/v3\n' % (
                        self.state, self.state, auth_strategy))

    def run_script(self, script, argv=(), env=None):
        """Run ``script`` with ``argv`` after it; its last line, as JSON."""
        result = subprocess.run(
            [sys.executable, '-c', SERVE + script, *argv],
            capture_output=True, text=True, timeout=120,
            env=dict(os.environ, **(env or {})))
        self.assertEqual(0, result.returncode, result.stderr)
        return json.loads(result.stdout.strip().splitlines()[-1])

    def paste(self, text):
        path = os.path.join(self.state, 'api-paste.ini')
        with open(path, 'w') as f:
            f.write(text)
        return self.run_script(
            'from cyborg.api import wsgi_app\n'
            'wsgi_app.init_application()\n'
            'from paste import deploy\n'
            'serve(deploy.loadapp("config:%s"))\n' % path,
            ['--config-file', self.conf])

    def assert_served(self, answers, statuses=(200, 200)):
        self.assertEqual(list(statuses), [status for status, _ in answers])
        # One request id each, though the pipeline's RequestId and the
        # application's both name the request.
        self.assertEqual([1, 1], [len(ids) for _, ids in answers])

    def test_wsgi_app_reads_the_config_file_of_pyargv(self):
        # A [database] connection only the file sets: the table is there.
        self.assert_served(self.run_script(
            'from cyborg.api import wsgi_app\n'
            'serve(wsgi_app.init_application())\n',
            ['--config-file', self.conf]))

    def test_wsgi_api_reads_the_config_file_of_pyargv(self):
        self.assert_served(self.run_script(
            'import sys\nsys.argv[1:1] = ["--workers", "2"]\n'
            'from cyborg.wsgi import api\nserve(api.application)\n',
            ['--config-file=%s' % self.conf],
            env={'CYBORG_CONFIG_FILE': '/nonexistent/cyborg.conf'}))

    def test_kolla_api_paste(self):
        self.assert_served(self.paste(KOLLA_PASTE))

    def test_cyborg17_api_paste(self):
        installed = _installed_17_paste()
        if installed:
            with open(installed) as f:
                self.assertEqual(
                    CYBORG17_PASTE.split(), f.read().split(),
                    'the pipeline of openstack-cyborg 17.0.0 differs')
        self.assert_served(self.paste(CYBORG17_PASTE))

    def test_the_paste_authtoken_filter_leaves_authentication_on(self):
        self.write_conf('keystone')
        # Discovery is public; the rest needs a valid token.
        self.assert_served(self.paste(CYBORG17_PASTE), (200, 401))

    def test_app_factory_says_what_it_needs(self):
        path = os.path.join(self.state, 'api-paste.ini')
        with open(path, 'w') as f:
            f.write(KOLLA_PASTE)
        result = subprocess.run(
            [sys.executable, '-c', 'from paste import deploy; '
             'deploy.loadapp("config:%s")' % path],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(1, result.returncode)
        self.assertIn('app_factory needs a prepared process', result.stderr)
