"""The pinned content of the templates' modules (:mod:`.templates`), per upstream version.

sha256 (hex) of each file as its author writes it, with where it was collected (the first
and last release collected with that content, and Debian's releases that ship it): the
setuptools wheels on PyPI (49.6 to 84.2) and Debian 12's, 13's and sid's python3-setuptools
(``_distutils_hack/__init__.py`` and ``override.py``); the editable finder setuptools 64+
generates (:func:`.templates.masked_form` of ``_FINDER_TEMPLATE`` rendered, sha256 of the
form); virtualenv's ``_virtualenv.py`` from its wheels on PyPI (20.0 to 21.15: the file is
copied as it is), and uv's copy, from the venvs each uv release on PyPI made (0.4 to 0.13,
one release a minor version).  A version missing here makes its files plain code, judged as any code
is, never a wrong excuse.  Imports nothing.
"""

#: ``_distutils_hack/__init__.py`` and ``override.py``: setuptools versions, Debian's.
DISTUTILS_HACK = {
    "870c6f4869d409d7434c7ef7b99175568095b5541ac621538e5d8145fd01194f":
        "setuptools 49.6.0 (__init__.py)",
    "12efecf8d17a5486780aa774b5b6c0e70b56932d8864f35df1eb7a18bb759b3a":
        "setuptools 49.6.0 .. 84.2.1; Debian 12, sid, 13 (override.py)",
    "c05b8045c9a51ed915db41df44195068c3d8ee1431f93104b670695decac8b02":
        "setuptools 50.3.2 .. 53.0.0 (__init__.py)",
    "322f93bf23a7b8ccd421cfeeb68129e66dccfc363a40b2d2917aa0e9ef30848f":
        "setuptools 56.0.0 (__init__.py)",
    "5f7454880e8a04fa0499ca3f0a3002ca5b7241b15119552965101b4a43c6c0cb":
        "setuptools 57.5.0 .. 58.1.0 (__init__.py)",
    "4c2531daa12158dcabb8bce3e03386640407dfd866d9f27fc0377dd2894d3a6a":
        "setuptools 59.6.0 (__init__.py)",
    "600ff3472bad5c46ee6438a9516e844282c2e8fb946ef62c1b2060f9a2fe3c2b":
        "setuptools 60.2.0 (__init__.py)",
    "026d425507ed93f30700abdf25056940cc15c7796b01b2863e1288520c1ac036":
        "setuptools 60.10.0 .. 61.3.1 (__init__.py)",
    "4d27a48545b57dd137ae35376fcf326d2064271084a487960686f8704b94de4a":
        "setuptools 62.6.0 .. 67.8.0; Debian 12 (__init__.py)",
    "46849a60a7cc85189cf6b5ac62b3f135004862ce6a96540a81c95ef6fbc4dc3e":
        "setuptools 68.0.0 .. 69.0.3 (__init__.py)",
    "4bf5b0bc8f8af7ce7096e96f7167cf4f776f2cc0983f5c8f876ca780b3a67781":
        "setuptools 69.1.1 .. 70.2.0 (__init__.py)",
    "1542e30b6d07156f447ab4bcaec4a3a330feb93167d5dcaf548f6d6b2cdb852c":
        "setuptools 70.3.0 .. 72.2.0 (__init__.py)",
    "9b737c2ccce2dad2e896acfb6285c708419121078c00231a5439a7647cdd72e4":
        "setuptools 73.0.1 (__init__.py)",
    "a325c4f62f92a19daaa558088e4339afd78e14df40c20a7d51c9dc3a714dc237":
        "setuptools 74.0.0 .. 75.3.4 (__init__.py)",
    "df81e6bcba34ee3e3952f776551fb669143b9490fdd6c4caeb32609f97e985b4":
        "setuptools 75.5.0 .. 83.0.0; Debian 13 (__init__.py)",
    "ced72e54431ecf2d8d7dbd8a1e27724f1b171af3ca1503c304bf11c59a7fe861":
        "setuptools 84.0.0 .. 84.2.1; Debian sid (__init__.py)",
}

#: setuptools' editable finder, data masked: the setuptools versions generating it.
EDITABLE_FINDER = {
    "6cb96ae79ba11262857332706b95374a8f7342d97a63035bbc57ddb67a42a468":
        "setuptools 64.0.0 .. 65.0.0",
    "f5200d884fc056644a96cc1b133779b5f2dc18c32d2638d93faacfe9d6399d8f":
        "setuptools 65.1.1",
    "6f1c0980c541ff53ffc49bb968b9470f46c5f1b725b8f232ed4993652e5b1955":
        "setuptools 65.3.0 .. 68.0.0; Debian 12",
    "a36f36f63eac735996915dde448c20083aa56a1a6745bdcf9c23bcd7158e0978":
        "setuptools 68.1.2",
    "35f2332f130d93ed029a365168ccf6bf065547630c4804ac97bbcfe0414a1596":
        "setuptools 68.2.2 .. 69.5.1",
    "45ec6074bca99924c992e6882270ef0d6fbf68b46b2aad1beac12bfc9fb038ce":
        "setuptools 70.0.0 .. 70.3.0",
    "aadaf7237e6de1513a3f7f2bbda14cd0bf0e20ac6466f13f00e7638072311a2a":
        "setuptools 71.0.0 .. 84.2.1; Debian sid, 13",
}

#: virtualenv's ``_virtualenv.py``: the virtualenv versions shipping it.
VIRTUALENV = {
    "684b8c07932ba4a84ac2e5ae9afe49ef04e92bac3d8d4191d455cf09d093e5fc":
        "virtualenv 20.0.35 .. 20.12.1",
    "ce57d5e0d9b5d7356cb42da7450ba8f9359bdf693e335f4c921626943c77e64d":
        "virtualenv 20.13.4 .. 20.15.1",
    "c9199315871b11b12df226f890a38e66e63191e1adbfb11a66e6861151b33fca":
        "virtualenv 20.16.7 .. 20.21.1",
    "f4dfaeb9efc1614890cfa94ed15bbe9b2ee15fbe76d569ef5e435e93e4987dc7":
        "virtualenv 20.22.0",
    "119e4eb9c1a39e6ffd220840844bd326fa1bd3acf2f1c9fa0612949aedc228a5":
        "virtualenv 20.23.1",
    "0aeb86546345c1d0fada097536e35525714d5cdbcc2d8eb3f9912a955044fcff":
        "virtualenv 20.24.7",
    "0f20351ea7e90039c46d3fabdef991f28b1e3ff33eb13ee6f0d5cd21ea0e8b14":
        "virtualenv 20.25.3 .. 20.34.0",
    "bec6155ff7bfc88f8e79e481f27fd7ee0a3b40eeca9bfeb41f4c4b997b2f8100":
        "virtualenv 20.35.4 .. 20.36.1",
    "02943e192823d75212f206e1f2991ac572119882683a95dfbb7a1b913d7b14b5":
        "virtualenv 20.38.0 .. 21.0.0",
    "e8c426ce260f866254ff35cefedc8b3efbd6d1446d99d7a4cdeb0095f98a8b8f":
        "virtualenv 21.1.0 .. 21.3.3",
    "460589e83387d4dfe5fd84d41c5f6979599f5cd080983d73c832549161c80435":
        "virtualenv 21.4.3 .. 21.6.1",
    "0278334cdcfab4c746b4416fbd5c2b6e7da937c81e132397d62c361d404ebe0e":
        "virtualenv 21.7.16 .. 21.15.0",
    "cfe56cafbd68fd31a0e87100f111d7d2f6b7157241096500013c07e88d80a22f":
        "virtualenv 21.15.14",
}

#: uv's copy of it (``uv venv``; none on 3.10+ since 0.13): the uv versions writing it.
UV_VIRTUALENV = {
    "6cf30c56faf2a55228914dbbd17f8088ed371ebb08f5e7fa6fd931f913fcaf1d":
        "uv 0.4.30 .. 0.10.12",
    "cfb3db86aaa53bb62b5ff764970bec2d71c9228590a0ebec57f6ec926cc0bf1a":
        "uv 0.11.33 .. 0.13.9",
}
