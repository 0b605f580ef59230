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
"""Running an FPGA vendor's programming tool: the root part.

The entrypoint runs in the ``[privsep_vendor_tool]`` daemon. It runs only
a tool that one of the daemon's own ``[fpga] *_path`` options names (a
driver that brings a new tool adds such an option), so a caller cannot
make it run anything else; the arguments are the driver's.
"""

import os
import signal
# This module exists to run the configured vendor tools.
import subprocess  # nosec B404

import cyborg.conf
import cyborg.privsep

CONF = cyborg.conf.CONF

#: How much of the tool's error output comes back.
STDERR_TAIL = 500


def _tools():
    return {getattr(CONF.fpga, name) for name in CONF.fpga
            if name.endswith('_path')}


@cyborg.privsep.vendor_tool_pctxt.entrypoint
def run(command, timeout):
    """Run ``command`` within ``timeout`` seconds.

    A tool that runs too long is killed with everything it started.

    :returns: (exit status, the end of its standard error); the status is
        None when the tool was killed for running too long.
    :raises ValueError: ``command`` does not start with a configured tool.
    :raises OSError: the tool cannot be run.
    """
    if not command or command[0] not in _tools():
        raise ValueError('%s is not a vendor tool of the [fpga] options'
                         % (command[0] if command else None))
    # A session of its own, so that a kill reaches its children too. The
    # program is one that an [fpga] option names, as checked above.
    with subprocess.Popen(  # nosec B603
            list(command), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True) as proc:
        try:
            _out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return None, ''
    return proc.returncode, err.decode(errors='replace')[-STDERR_TAIL:]
