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
"""A one-process service and the signals that stop or reload it.

Each test runs :func:`cyborg.common.service.run` in a child process, on a
service that starts a thread of its own (as the RPC server does) and says
what is asked of it on its standard output.
"""

import os
import signal
import subprocess  # nosec B404
import sys
import textwrap

import fixtures
import testtools

_CHILD = textwrap.dedent('''
    import sys
    import threading
    import time

    from oslo_config import cfg
    from oslo_service import service as oslo_service

    from cyborg.common import service

    def say(word):
        print(word, flush=True)

    class Service(oslo_service.ServiceBase):
        def start(self):
            threading.Thread(target=time.sleep, args=(3600,),
                             daemon=True).start()
            say('started')

        def stop(self, graceful=True):
            say('stopping')
            time.sleep(float(sys.argv[2]))
            say('stopped')

        def reset(self):
            say('reset debug=%s' % conf.debug)

        def wait(self):
            pass

    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.BoolOpt('debug', mutable=True))
    conf([], default_config_files=[sys.argv[1]])
    sys.exit(service.run(Service(), conf))
''')


class RunTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.conf_file = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'cyborg.conf')
        self._write_conf('debug = false\ngraceful_shutdown_timeout = 1\n')

    def _write_conf(self, text):
        with open(self.conf_file, 'w') as f:
            f.write('[DEFAULT]\n' + text)

    def _start(self, stop_takes=0):
        # The child is this interpreter running the code above.
        proc = subprocess.Popen(  # nosec B603
            [sys.executable, '-c', _CHILD, self.conf_file, str(stop_takes)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.addCleanup(proc.stdout.close)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        self.assertEqual('started', self._line(proc))
        return proc

    def _line(self, proc):
        return proc.stdout.readline().strip()

    def test_sigterm_stops_gracefully(self):
        proc = self._start()
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(30))
        self.assertEqual(['stopping', 'stopped'],
                         proc.stdout.read().split())

    def test_sighup_applies_mutable_options_and_goes_on(self):
        proc = self._start()
        self._write_conf('debug = true\n')
        proc.send_signal(signal.SIGHUP)
        self.assertEqual('reset debug=True', self._line(proc))
        self.assertIsNone(proc.poll())
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(30))

    def test_sigint_exits_at_once(self):
        proc = self._start(stop_takes=60)
        proc.send_signal(signal.SIGINT)
        self.assertEqual(1, proc.wait(30))
        self.assertEqual('', proc.stdout.read())

    def test_overlong_graceful_stop_exits(self):
        proc = self._start(stop_takes=60)
        proc.send_signal(signal.SIGTERM)
        # graceful_shutdown_timeout = 1
        self.assertEqual(1, proc.wait(30))
        self.assertEqual(['stopping'], proc.stdout.read().split())
