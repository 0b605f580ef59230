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
"""Answer GET requests with openstack-cyborg 17.0.0's own API application.

Not part of our code: ``test_cyborg17_wire`` runs this file with the
Python of the virtualenv that holds openstack-cyborg 17.0.0, so every
``cyborg`` below is that package. Usage::

    python cyborg17_api.py CONFIG_FILE BASE_URL < REQUESTS

REQUESTS is a JSON list of ``[path, microversion]``; the answer, printed
as JSON, is a list of ``[status, body]`` in the same order (the body is
null when the response has none). Each request is an administrator's,
made in this process through 17.0.0's WSGI application (without its
authentication middleware, as its ``noauth`` strategy serves it) mounted
under BASE_URL.
"""

import json
import sys

import webob

from cyborg.api import app
from cyborg.common import rpc
from cyborg.conf import CONF
from cyborg import objects


def main(config_file, base_url):
    CONF(['--config-file', config_file], project='cyborg')
    rpc.init(CONF)
    objects.register_all()
    application = app.setup_app()
    answers = []
    for path, version in json.load(sys.stdin):
        request = webob.Request.blank(path, base_url=base_url)
        request.headers['OpenStack-API-Version'] = 'accelerator ' + version
        request.headers['X-Roles'] = 'admin'
        request.headers['X-Project-Id'] = 'a' * 32
        response = request.get_response(application)
        answers.append([response.status_int,
                        response.json if response.body else None])
    json.dump(answers, sys.stdout)


if __name__ == '__main__':
    main(*sys.argv[1:])
