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
"""The process-wide choices of a Cyborg program: native threads, no eventlet.

Only the entry points that start a process call :func:`use_native_threads`
(``cyborg.cmd``, ``cyborg.wsgi``, ``cyborg.api.wsgi_app``, the tests'
package), first of all, before they import a library: ``import cyborg``
chooses nothing for a program that merely imports it. This module imports
nothing at its own import for the same reason.
"""

import sys


def use_native_threads():
    """Run on native threads: eventlet marked missing, oslo.service threading.

    Cyborg never runs eventlet, but oslo.service's dependencies install it,
    and libraries that only look for it when it is installed (futurist,
    oslo.utils, oslo.messaging, oslo.privsep) would import it, and with it
    dnspython, pyOpenSSL and cryptography: about 25 MiB in every process.
    Marked missing, it is not looked for. A program that imported eventlet
    before keeps it.

    oslo.messaging imports oslo.service, which would otherwise choose its
    eventlet backend the first time it is asked. A program that chose a
    backend before (oslo-config-generator, through oslo.messaging's
    options) keeps its choice; Cyborg's services check theirs when they
    start (:class:`cyborg.common.service.RPCService`).
    """
    sys.modules.setdefault('eventlet', None)
    from oslo_service import backend

    if backend.get_backend_type() is None:
        backend.init_backend(backend.BackendType.THREADING)
