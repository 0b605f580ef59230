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
"""A small local server speaking the Glance v2 image API, for tests.

It serves what python-glanceclient reads to find and download images:
``GET /v2/schemas/image``, ``GET /v2/images`` (tag and property filters,
``limit``/``marker`` paging), ``GET /v2/images/{id}`` and
``GET /v2/images/{id}/file``. It listens on 127.0.0.1 on a free port.
"""

import hashlib
import http.server
import json
import threading
import urllib.parse
import uuid

import fixtures

_SCHEMA = {
    'name': 'image',
    'properties': {
        'id': {'type': 'string'},
        'name': {'type': ['null', 'string']},
        'status': {'type': 'string'},
        'tags': {'type': 'array', 'items': {'type': 'string'}},
        'size': {'type': ['null', 'integer']},
        'checksum': {'type': ['null', 'string']},
        'os_hash_algo': {'type': ['null', 'string']},
        'os_hash_value': {'type': ['null', 'string']},
    },
    # Like Glance: any other property is a string.
    'additionalProperties': {'type': 'string'},
}
#: Query parameters of GET /v2/images that are not property filters.
_NOT_FILTERS = ('limit', 'marker', 'sort', 'sort_key', 'sort_dir', 'tag')
_CHUNK = 64 * 1024


class _Handler(http.server.BaseHTTPRequestHandler):

    protocol_version = 'HTTP/1.1'

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        glance = self.server.glance
        url = urllib.parse.urlsplit(self.path)
        glance.requests.append(url.path)
        parts = url.path.strip('/').split('/')
        if parts == ['v2', 'schemas', 'image']:
            return self._json(200, _SCHEMA)
        if parts == ['v2', 'images']:
            return self._json(200, glance.list_page(
                urllib.parse.parse_qs(url.query)))
        if len(parts) in (3, 4) and parts[:2] == ['v2', 'images']:
            image = glance.images.get(parts[2])
            if image is None:
                return self._not_found('No image found with ID %s'
                                       % parts[2])
            if len(parts) == 3:
                return self._json(200, image)
            if parts[3] == 'file':
                return self._data(glance.data[image['id']])
        return self._not_found('The resource could not be found.')

    def _not_found(self, explanation):
        # Glance answers errors with webob's plain text pages.
        data = ('404 Not Found\n\n%s\n\n   ' % explanation).encode()
        self.send_response(404)
        self.send_header('Content-Type', 'text/plain; charset=UTF-8')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _data(self, data):
        self.send_response(200)
        self.send_header('Content-Type', 'application/octet-stream')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        for start in range(0, len(data), _CHUNK):
            self.wfile.write(data[start:start + _CHUNK])


class LocalGlance(fixtures.Fixture):
    """The server as a fixture; points ``[glance]`` of ``conf`` at it."""

    def __init__(self, conf):
        super().__init__()
        self.conf = conf

    def _setUp(self):
        self.images = {}
        self.data = {}
        self.requests = []
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
        server.daemon_threads = True
        server.glance = self
        thread = threading.Thread(target=server.serve_forever,
                                  name='local-glance', daemon=True)
        thread.start()
        self.addCleanup(thread.join)
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.url = 'http://127.0.0.1:%d' % server.server_address[1]
        self.conf.config(endpoint_override=self.url, group='glance')

    def add_image(self, data=b'bitstream', name='bitstream',
                  tags=('FPGA',), status='active', **properties):
        """Store an image; ``properties`` may override any field.

        :returns: the image as the API shows it.
        """
        image = {
            'id': str(uuid.uuid4()), 'name': name, 'status': status,
            'tags': list(tags), 'size': len(data),
            'visibility': 'public', 'container_format': 'bare',
            'disk_format': 'raw',
            'checksum': hashlib.md5(data, usedforsecurity=False).hexdigest(),
            'os_hash_algo': 'sha512',
            'os_hash_value': hashlib.sha512(data).hexdigest(),
            'created_at': '2026-01-01T00:00:00Z',
            'updated_at': '2026-01-01T00:00:00Z',
        }
        image.update(properties)
        self.images[image['id']] = image
        self.data[image['id']] = data
        return image

    def list_page(self, query):
        tags = set(query.get('tag', []))
        filters = {k: v[0] for k, v in query.items() if k not in _NOT_FILTERS}
        matches = [i for i in self.images.values()
                   if tags <= set(i['tags']) and
                   all(str(i.get(k)) == v for k, v in filters.items())]
        matches.sort(key=lambda i: i['id'])
        if 'marker' in query:
            matches = [i for i in matches if i['id'] > query['marker'][0]]
        limit = int(query.get('limit', ['25'])[0])
        body = {'images': matches[:limit], 'schema': '/v2/schemas/images',
                'first': '/v2/images'}
        if len(matches) > limit:
            rest = dict(query, marker=[matches[limit - 1]['id']])
            body['next'] = '/v2/images?' + urllib.parse.urlencode(rest,
                                                                  doseq=True)
        return body
