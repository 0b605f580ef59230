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
"""A small local server speaking the Glance v2 image API.

It serves what python-glanceclient and openstacksdk read to find and
download images: the version document ``GET /``,
``GET /v2/schemas/image``, ``GET /v2/images`` (tag and property filters,
``limit``/``marker`` paging), ``GET /v2/images/{id}`` and
``GET /v2/images/{id}/file``. Images are added in code
(:meth:`ImageService.add_image`); with a directory they are also kept
there and served again after a restart, which is how the quickstart
offers its demo bitstream. For Nova's server snapshots (shelve) it also
creates an image record without data (``POST /v2/images``, ``queued``)
and deletes images (``DELETE /v2/images/{id}``).

Run it on its own with ``python -m cyborg.demo.glance --port 9292 --dir
/path/images``; :func:`store_image` adds an image to such a directory.
"""

import argparse
import hashlib
import json
import os
import urllib.parse
import uuid

from cyborg.demo import server

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
        'visibility': {'type': 'string'},
        'container_format': {'type': ['null', 'string']},
        'disk_format': {'type': ['null', 'string']},
        'min_disk': {'type': 'integer'},
        'min_ram': {'type': 'integer'},
        'protected': {'type': 'boolean'},
    },
    # Like Glance: any other property is a string.
    'additionalProperties': {'type': 'string'},
}
#: Query parameters of GET /v2/images that are not property filters.
_NOT_FILTERS = ('limit', 'marker', 'sort', 'sort_key', 'sort_dir', 'tag')
_CHUNK = 64 * 1024


def make_image(data, name='bitstream', tags=('FPGA',), status='active',
               **properties):
    """An image record as the API shows it.

    ``properties`` may override any field, ``id`` included.
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
    return image


def store_image(directory, data, **properties):
    """Keep an image in ``directory`` for a server started on it.

    :returns: the image as the API shows it.
    """
    image = make_image(data, **properties)
    os.makedirs(directory, exist_ok=True)
    base = os.path.join(directory, image['id'])
    with open(base + '.data', 'wb') as f:
        f.write(data)
    with open(base + '.json', 'w') as f:
        json.dump(image, f)
    return image


def _load(directory):
    """The images kept in ``directory`` and their data."""
    images, data = {}, {}
    for entry in sorted(os.listdir(directory)):
        if not entry.endswith('.json'):
            continue
        with open(os.path.join(directory, entry)) as f:
            image = json.load(f)
        with open(os.path.join(directory, image['id'] + '.data'), 'rb') as f:
            data[image['id']] = f.read()
        images[image['id']] = image
    return images, data


def _reply(start_response, status, content_type, data):
    start_response(status, [('Content-Type', content_type),
                            ('Content-Length', str(len(data)))])
    return [data[start:start + _CHUNK]
            for start in range(0, len(data), _CHUNK)] or [b'']


def _json(start_response, body):
    return _reply(start_response, '200 OK', 'application/json',
                  json.dumps(body).encode())


def _not_found(start_response, explanation):
    # Glance answers errors with webob's plain text pages.
    return _reply(start_response, '404 Not Found',
                  'text/plain; charset=UTF-8',
                  ('404 Not Found\n\n%s\n\n   ' % explanation).encode())


class ImageService(server.LoopbackServer):
    """The image API on ``host``:``port`` (0 picks a free port).

    ``images`` and ``data`` hold what it serves, by image id;
    ``requests`` the paths it was asked for, oldest first, and ``tokens``
    the user and service tokens (``X-Auth-Token``, ``X-Service-Token``)
    each request carried. No token is checked.
    """

    def __init__(self, host='127.0.0.1', port=0, directory=None):
        self.directory = directory
        self.images, self.data = _load(directory) if directory else ({}, {})
        self.requests = []
        self.tokens = []
        super().__init__(self, host, port, threads=4, name='local-glance')

    def __call__(self, environ, start_response):
        path = environ['PATH_INFO']
        self.requests.append(path)
        self.tokens.append((environ.get('HTTP_X_AUTH_TOKEN'),
                            environ.get('HTTP_X_SERVICE_TOKEN')))
        parts = path.strip('/').split('/')
        method = environ['REQUEST_METHOD']
        if method == 'POST' and parts == ['v2', 'images']:
            return self._create(environ, start_response)
        if method == 'DELETE' and len(parts) == 3 and parts[:2] == [
                'v2', 'images']:
            return self._delete(parts[2], start_response)
        if method != 'GET':
            parts = None
        if parts == ['']:
            return _json(start_response, {'versions': [{
                'id': 'v2.16', 'status': 'CURRENT',
                'links': [{'rel': 'self', 'href': self.url + '/v2/'}]}]})
        if parts == ['v2', 'schemas', 'image']:
            return _json(start_response, _SCHEMA)
        if parts == ['v2', 'images']:
            return _json(start_response, self.list_page(
                urllib.parse.parse_qs(environ.get('QUERY_STRING', ''))))
        if parts and len(parts) in (3, 4) and parts[:2] == ['v2', 'images']:
            image = self.images.get(parts[2])
            if image is None:
                return _not_found(start_response,
                                  'No image found with ID %s' % parts[2])
            if len(parts) == 3:
                return _json(start_response, image)
            if parts[3] == 'file':
                return _reply(start_response, '200 OK',
                              'application/octet-stream',
                              self.data[image['id']])
        return _not_found(start_response,
                          'The resource could not be found.')

    def _create(self, environ, start_response):
        length = int(environ.get('CONTENT_LENGTH') or 0)
        properties = json.loads(environ['wsgi.input'].read(length) or '{}')
        properties.setdefault('tags', [])
        image = self.add_image(b'', status='queued', **properties)
        return _reply(start_response, '201 Created', 'application/json',
                      json.dumps(image).encode())

    def _delete(self, image_id, start_response):
        if self.images.pop(image_id, None) is None:
            return _not_found(start_response,
                              'No image found with ID %s' % image_id)
        del self.data[image_id]
        if self.directory:
            for suffix in ('.json', '.data'):
                os.unlink(os.path.join(self.directory, image_id + suffix))
        return _reply(start_response, '204 No Content', 'text/plain', b'')

    def add_image(self, data=b'bitstream', **properties):
        """Serve an image, kept in the directory if there is one.

        ``properties`` are those of :func:`make_image`.

        :returns: the image as the API shows it.
        """
        if self.directory:
            image = store_image(self.directory, data, **properties)
        else:
            image = make_image(data, **properties)
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


def main(argv=None):
    parser = argparse.ArgumentParser(
        description='Serve the images kept in a directory with the Glance '
                    'v2 image API, without authentication.')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=9292)
    parser.add_argument('--dir', required=True,
                        help='directory of the images (see store_image)')
    args = parser.parse_args(argv)
    os.makedirs(args.dir, exist_ok=True)
    service = ImageService(args.host, args.port, args.dir)
    print('Image service serving %d image(s) on %s' % (
        len(service.images), service.url), flush=True)
    service.serve_forever()


if __name__ == '__main__':
    main()
