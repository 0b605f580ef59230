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
"""What runs in Nova's own virtualenv, by path, beside Nova's services.

:mod:`cyborg_quickstart.nova` copies these files into its state directory
and runs them with the python of Nova's virtualenv, which has neither
Cyborg nor this tool; ``requirements.txt`` beside them lists what they
import there (``tools/setup-client-venvs.sh nova-34.0.0`` installs it).
They import Nova inside their functions only, so that the tool and the
tests may read their constants and helpers from here.
"""
