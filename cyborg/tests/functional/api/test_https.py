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
"""``cyborg-api`` with ``[api] enable_ssl_api``: HTTPS, as 17.0.0 served.

A CA made here signs the server's certificate (for ``127.0.0.1``) and a
client's; requests checks the server against the CA.
"""

import datetime
import ipaddress
import os
import subprocess
import sys
import time

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography import x509
from cryptography.x509 import oid
import fixtures
import requests
import testtools

from cyborg.tests.functional.api import test_cmd


def _name(common_name):
    return x509.Name([x509.NameAttribute(oid.NameOID.COMMON_NAME,
                                         common_name)])


def _certificate(subject, key, issuer, issuer_key, ca=False, ip=None):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder()
               .subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None),
                              critical=True))
    if ip:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address(ip))]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


class TestHTTPS(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.port = test_cmd._free_port()
        ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ca = self._write('ca.pem', _certificate(
            'test CA', ca_key, 'test CA', ca_key, ca=True))
        for name, ip in (('server', '127.0.0.1'), ('client', None)):
            key = ec.generate_private_key(ec.SECP256R1())
            self._write(name + '.pem', _certificate(
                name, key, 'test CA', ca_key, ip=ip))
            self._write(name + '.key', key)

    def _write(self, name, item):
        path = os.path.join(self.dir, name)
        with open(path, 'wb') as f:
            if isinstance(item, x509.Certificate):
                f.write(item.public_bytes(serialization.Encoding.PEM))
            else:
                f.write(item.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption()))
        return path

    def _path(self, name):
        return os.path.join(self.dir, name)

    def _start(self, ssl_options):
        conf = self._path('cyborg.conf')
        with open(conf, 'w') as f:
            # Reads only: no message is sent, so no RabbitMQ is needed.
            f.write('[DEFAULT]\ntransport_url = %s\nstate_path = %s\n'
                    '[database]\nconnection = sqlite:///%s/c.sqlite\n'
                    '[api]\nauth_strategy = noauth\nport = %d\n'
                    'enable_ssl_api = true\n[ssl]\n%s' % (
                        test_cmd.RABBIT, self.dir, self.dir, self.port,
                        ssl_options))
        subprocess.run([sys.executable, '-c',
                        'import sys; from cyborg.cmd import dbsync; '
                        'sys.exit(dbsync.main())', '--config-file', conf,
                        'upgrade'], check=True, capture_output=True)
        # Its log, on stdout, goes to a file that no full pipe blocks.
        with open(self._path('api.log'), 'w') as log:
            process = subprocess.Popen(
                [sys.executable, '-c', 'import sys; from cyborg.cmd import '
                 'api; sys.exit(api.main())', '--config-file', conf],
                stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(process.wait, 30)
        self.addCleanup(process.terminate)
        return process

    def _log(self):
        with open(self._path('api.log')) as f:
            return f.read()

    def _get(self, **kwargs):
        return requests.get('https://127.0.0.1:%d/v2' % self.port,
                            timeout=10, **kwargs)

    def _wait(self, process, **kwargs):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.fail('cyborg-api exited: %s' % self._log())
            try:
                return self._get(**kwargs)
            except requests.ConnectionError:
                time.sleep(0.2)  # not listening yet
        self.fail('cyborg-api did not start listening within 60s')

    def test_serves_https_with_the_ssl_group(self):
        process = self._start('cert_file = %s\nkey_file = %s\n' % (
            self._path('server.pem'), self._path('server.key')))
        response = self._wait(process, verify=self.ca)
        self.assertEqual(200, response.status_code)
        # Links name the scheme clients came with.
        self.assertEqual('https://127.0.0.1:%d/v2/' % self.port,
                         response.json()['links'][0]['href'])
        # Plain HTTP is not served on the port.
        self.assertRaises(requests.ConnectionError, requests.get,
                          'http://127.0.0.1:%d/v2' % self.port, timeout=10)

    def test_ca_file_asks_clients_for_certificates(self):
        process = self._start(
            'cert_file = %s\nkey_file = %s\nca_file = %s\n' % (
                self._path('server.pem'), self._path('server.key'),
                self.ca))
        client = (self._path('client.pem'), self._path('client.key'))
        self.assertEqual(200, self._wait(process, verify=self.ca,
                                         cert=client).status_code)
        self.assertRaises(requests.ConnectionError, self._get,
                          verify=self.ca)

    def test_missing_files_stop_the_start(self):
        missing = self._path('missing.pem')
        process = self._start('cert_file = %s\nkey_file = %s\n' % (
            missing, self._path('server.key')))
        self.assertEqual(1, process.wait(60))
        error = self._log()
        self.assertIn('cyborg-api cannot start: cyborg-api cannot serve '
                      'HTTPS: [ssl] cert_file %s cannot be read.' % missing,
                      error)
        self.assertNotIn('Traceback', error)
        process = self._start('cert_file = %s\n' % self._path('server.pem'))
        self.assertEqual(1, process.wait(60))
        self.assertIn('[api] enable_ssl_api is set but [ssl] key_file is '
                      'not.', self._log())
