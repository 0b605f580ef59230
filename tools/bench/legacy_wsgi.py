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
"""The WSGI application of openstack-cyborg 17.0.0, for gunicorn.

Its ``cyborg.wsgi.api`` parses the process's command line as its own
options, which under gunicorn are gunicorn's: this module gives it
``--config-file $CYBORG_BENCH_CONFIG`` instead, then loads it.
``tools/bench/compare.py`` serves it with
``gunicorn --pythonpath tools/bench legacy_wsgi:application``.
"""

import os
import sys

sys.argv = [sys.argv[0], '--config-file', os.environ['CYBORG_BENCH_CONFIG']]

from cyborg.wsgi import api  # noqa: E402

application = api.application
