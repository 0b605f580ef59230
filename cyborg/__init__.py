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
"""Cyborg: accelerator lifecycle management for OpenStack."""

import sys

# Cyborg never runs eventlet, but oslo.service's dependencies install it,
# and libraries that only look for it when it is installed (futurist,
# oslo.utils, oslo.messaging, oslo.privsep) would import it, and with it
# dnspython, pyOpenSSL and cryptography: about 25 MiB in every process.
# Marked missing, it is not looked for. A program that imported eventlet
# before us keeps it.
sys.modules.setdefault('eventlet', None)

from oslo_service import backend  # noqa: E402

# Cyborg runs on native threads. oslo.messaging imports oslo.service, which
# would otherwise choose its eventlet backend the first time it is asked.
# A tool that imported oslo.messaging before us (oslo-config-generator)
# keeps its choice; Cyborg's services check theirs when they start.
if backend.get_backend_type() is None:
    backend.init_backend(backend.BackendType.THREADING)
