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
"""The limit of tools/bench/compare.py: a bare WSGI application.

It answers every request with the file ``$CYBORG_BENCH_BODY`` (the list of
200 device profiles a Cyborg answered), read once into memory, as JSON.
Served by gunicorn as the existing service is, it shows what the server,
the machine and the load generator allow when the application does no
work.
"""

import os

with open(os.environ['CYBORG_BENCH_BODY'], 'rb') as _f:
    BODY = _f.read()
HEADERS = [('Content-Type', 'application/json'),
           ('Content-Length', str(len(BODY)))]


def application(environ, start_response):
    start_response('200 OK', HEADERS)
    return [BODY]
