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
"""The agent's privileged daemons without root, for the tests and quickstart.

On a real host each daemon starts with ``sudo privsep-helper`` and keeps
the capabilities of its context (:mod:`cyborg.privsep`). The quickstart
and the tests run as an ordinary user on a simulated sysfs tree: the same
helper starts without ``sudo`` and keeps no capability.
"""

import shlex
import sys

from cyborg import privsep

#: oslo.privsep's ``privsep-helper``, run by this interpreter.
HELPER = [sys.executable, '-c',
          'from oslo_privsep.daemon import helper_main; helper_main()']


def helper_command(conf_file):
    """The ``helper_command`` of a daemon that reads ``conf_file``."""
    return shlex.join(HELPER + ['--config-file', conf_file])


def config_lines(conf_file):
    """The cyborg.conf sections that start every daemon unprivileged."""
    lines = []
    for context, _caps in privsep.CONTEXTS:
        lines += ['[%s]' % context.cfg_section,
                  'helper_command = %s' % helper_command(conf_file),
                  'capabilities =', '']
    return lines
